package analyze

import (
	"testing"

	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
)

// fragTrace is 4 steps of 1000µs; each allocates a 64 MiB block and frees
// it, while the allocator holds reserved MiB: at each step's peak of
// allocated memory (64 MiB) reserved − allocated is reserved − 64 MiB.
func fragTrace(reserved int64) *trace.Trace {
	const mib = 1 << 20
	b := tt.New()
	for s := range 4 {
		at := tt.Us(1000 * float64(s))
		b.Step(at, at+tt.Us(1000))
		gpuBound(b, at, kernel{"gemm_kernel", 100})
		addr := int64(0x1000 * (s + 1))
		b.AllocReserved(at+tt.Us(200), 64*mib, addr, 64*mib, reserved*mib)
		b.AllocReserved(at+tt.Us(900), -64*mib, addr, 0, reserved*mib)
	}
	return b.Build()
}

func TestMemoryFragmentationBuilt(t *testing.T) {
	// 160 MiB reserved at a 64 MiB peak: 96 MiB unused, 60% of reserved.
	f := oneFinding(t, fragTrace(160), MemoryFragmentation)
	checkNear(t, "unused", measureOf(t, f, "reserved − allocated at the step's peak"), 96<<20)
	checkNear(t, "reserved", measureOf(t, f, "reserved at the step's peak"), 160<<20)
	checkNear(t, "share", measureOf(t, f, "share of the reserved memory"), 0.6)
	if f.SavingUs != 0 {
		t.Errorf("saving %v, want none (memory, not time)", f.SavingUs)
	}
	// 90 MiB reserved: 26 MiB unused is under the 32 MiB floor.
	noFinding(t, fragTrace(90), MemoryFragmentation)
}

package analyze

import (
	"testing"

	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
)

// growthTrace is 4 steps of 1000µs, each allocating a 2 MiB block early
// on (the allocator's totals in its events) and, when freed, freeing it
// before the step ends.
func growthTrace(freed bool) *trace.Trace {
	const mib = 1 << 20
	b := tt.New()
	var allocated int64
	for s := range 4 {
		at := tt.Us(1000 * float64(s))
		b.Step(at, at+tt.Us(1000))
		gpuBound(b, at, kernel{"gemm_kernel", 100})
		addr := int64(0x1000 * (s + 1))
		allocated += 2 * mib
		b.Alloc(at+tt.Us(200), 2*mib, addr, allocated)
		if freed {
			allocated -= 2 * mib
			b.Alloc(at+tt.Us(900), -2*mib, addr, allocated)
		}
	}
	return b.Build()
}

func TestMemoryGrowthBuilt(t *testing.T) {
	// Step k begins with k blocks of 2 MiB: +2 MiB every step; the steady
	// steps' 3 blocks are never freed.
	f := oneFinding(t, growthTrace(false), MemoryGrowth)
	checkNear(t, "growth", measureOf(t, f, "growth per step"), 2<<20)
	checkNear(t, "last start", measureOf(t, f, "allocated at the last step's start"), 3*2<<20)
	checkNear(t, "never freed", measureOf(t, f, "never freed in the steady steps"), 3*2<<20)
	if f.OneOffUs != 0 || f.SavingUs != 0 {
		t.Errorf("saving %v/%v, want none (memory, not time)", f.SavingUs, f.OneOffUs)
	}
	// Each step frees what it allocated: flat.
	noFinding(t, growthTrace(true), MemoryGrowth)
}

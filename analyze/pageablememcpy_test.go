package analyze

import (
	"testing"

	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
)

// copyTrace is 3 steps of 1000µs, each copying n buffers of size bytes
// host→device from src memory (a 20µs cudaMemcpyAsync call every 100µs,
// its copy running gpu µs after the call) with a 200µs kernel after.
func copyTrace(n int, size int64, src trace.MemKind, gpu float64) *trace.Trace {
	b := tt.New()
	for s := range 3 {
		at := tt.Us(1000 * float64(s))
		b.Step(at, at+tt.Us(1000))
		for i := range n {
			c := at + tt.Us(100*float64(i))
			b.Launch("cudaMemcpyAsync", c, c+tt.Us(20)).Copy(trace.HtoD, src, trace.Device, size, c+tt.Us(20), c+tt.Us(20+gpu))
		}
		b.Launch("cudaLaunchKernel", at+tt.Us(700), at+tt.Us(720)).Kernel("gemm_kernel", at+tt.Us(720), at+tt.Us(920))
	}
	return b.Build()
}

func TestPageableMemcpyBuilt(t *testing.T) {
	// One 1 MiB pageable copy a step: 3 copies, 3 MiB, the host blocked
	// in its 20µs call each time.
	f := oneFinding(t, copyTrace(1, 1<<20, trace.Pageable, 60), PageableMemcpy)
	checkNear(t, "copies", measureOf(t, f, "copies"), 3)
	checkNear(t, "bytes", measureOf(t, f, "bytes copied"), 3<<20)
	checkNear(t, "host blocked", measureOf(t, f, "host blocked"), 3*20)
	// From pinned memory the same copies are what pinning recommends.
	noFinding(t, copyTrace(1, 1<<20, trace.Pinned, 60), PageableMemcpy)
}

package analyze

import (
	"testing"

	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
)

// churnTrace is 3 steps of 1000µs: a 100µs kernel the host waits for,
// then with the GPU idle a 50µs cudaFree and, when both, a 40µs
// cudaMalloc.
func churnTrace(both bool) *trace.Trace {
	b := tt.New()
	for s := range 3 {
		at := tt.Us(1000 * float64(s))
		b.Step(at, at+tt.Us(1000))
		gpuBound(b, at, kernel{"gemm_kernel", 100})
		b.API("cudaFree", at+tt.Us(300), at+tt.Us(350))
		if both {
			b.API("cudaMalloc", at+tt.Us(360), at+tt.Us(400))
		}
	}
	return b.Build()
}

func TestAllocatorChurnBuilt(t *testing.T) {
	// Steady steps: 2 calls, 90µs of host time, all with the GPU idle.
	f := oneFinding(t, churnTrace(true), AllocatorChurn)
	checkNear(t, "calls", measureOf(t, f, "allocations and frees per step"), 2)
	checkNear(t, "host", measureOf(t, f, "host time in them per step"), 90)
	checkNear(t, "idle", measureOf(t, f, "of which the GPU is idle"), 90)
	// One call a step: under AllocatorChurnMinCalls.
	noFinding(t, churnTrace(false), AllocatorChurn)
}

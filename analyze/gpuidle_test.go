package analyze

import (
	"testing"

	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
)

// idleTrace is 3 steps of 2×100µs kernels (20µs launch calls) with gap µs
// of GPU idle between them, while the host is in the user's load_batch.
func idleTrace(gap float64) *trace.Trace {
	b := tt.New()
	wall := 240 + gap
	for s := range 3 {
		at := tt.Us(wall * float64(s))
		b.Step(at, at+tt.Us(wall))
		b.Launch("cudaLaunchKernel", at, at+tt.Us(20)).Kernel("gemm_kernel", at+tt.Us(20), at+tt.Us(120))
		b.Frame("train.py(12): load_batch", at+tt.Us(120), at+tt.Us(120+gap))
		b.Launch("cudaLaunchKernel", at+tt.Us(120+gap), at+tt.Us(140+gap)).Kernel("gemm_kernel", at+tt.Us(140+gap), at+tt.Us(240+gap))
	}
	return b.Build()
}

func TestGPUIdleBuilt(t *testing.T) {
	// 800µs steps: the GPU idles from the first kernel's end (120µs) to
	// the second's start (700µs), one 580µs gap a step.
	f := oneFinding(t, idleTrace(560), GPUIdle)
	checkNear(t, "median step", measureOf(t, f, "median step"), 800)
	checkNear(t, "long-gap idle", measureOf(t, f, "long-gap idle per step"), 580)
	if got := f.SavingUs; got <= 0 || got > 580 {
		t.Errorf("saving %v, want a part of the 580µs gap", got)
	}
	// A 170µs wait (190µs of idle) stays under LaunchGap: launch gaps are
	// not gpu-idle's.
	noFinding(t, idleTrace(170), GPUIdle)
}

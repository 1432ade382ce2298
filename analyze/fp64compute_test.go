package analyze

import (
	"testing"

	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
)

// fp64Trace is 3 steps, each an elementwise kernel on doubles of fp64 µs
// and one on floats making the step's kernels 1000µs, the host waiting
// for them.
func fp64Trace(fp64 float64) *trace.Trace {
	b := tt.New()
	for s := range 3 {
		at := tt.Us(2000 * float64(s))
		b.Step(at, at+tt.Us(2000))
		gpuBound(b, at, kernel{"void at::native::vectorized_elementwise_kernel<4, AbsFunctor<double>>", fp64},
			kernel{"void at::native::vectorized_elementwise_kernel<4, AbsFunctor<float>>", 1000 - fp64})
	}
	return b.Build()
}

func TestFP64ComputeBuilt(t *testing.T) {
	// 200µs of 1000µs in fp64, memory-bound: half its time saved in fp32.
	f := oneFinding(t, fp64Trace(200), FP64Compute)
	checkNear(t, "fp64 time", measureOf(t, f, "fp64 kernel time"), 600)
	checkNear(t, "share", measureOf(t, f, "share of GPU kernel time"), 0.2)
	checkNear(t, "saving", f.SavingUs, 100)
	// 90µs of 1000µs: under FP64MinShare.
	noFinding(t, fp64Trace(90), FP64Compute)
}

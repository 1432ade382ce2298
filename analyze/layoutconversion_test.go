package analyze

import (
	"testing"

	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
)

// layoutTrace is 3 steps, each a 600µs convolution and a cuDNN
// nchwToNhwc transpose of layout µs before it, the host waiting for both.
func layoutTrace(layout float64) *trace.Trace {
	b := tt.New()
	for s := range 3 {
		at := tt.Us(1000 * float64(s))
		b.Step(at, at+tt.Us(1000))
		gpuBound(b, at, kernel{"nchwToNhwcKernel", layout}, kernel{"cudnn_convolve_sm80_kernel", 600})
	}
	return b.Build()
}

func TestLayoutConversionBuilt(t *testing.T) {
	// 200µs of 800µs a step converts layouts.
	f := oneFinding(t, layoutTrace(200), LayoutConversion)
	checkNear(t, "layout", measureOf(t, f, "layout conversion GPU time per step"), 200)
	checkNear(t, "conv", measureOf(t, f, "convolution GPU time per step"), 600)
	checkNear(t, "share", measureOf(t, f, "share of GPU kernel time"), 0.25)
	// 50µs of 650µs (7.7%): under LayoutMinShare.
	noFinding(t, layoutTrace(50), LayoutConversion)
}

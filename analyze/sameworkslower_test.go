package analyze

import (
	"strings"
	"testing"

	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
)

// sameWorkTrace is 3 steps, each one 1024×1024×1024 fp32 GEMM through
// aten::mm (cuBLAS, 100µs) and one through aten::matmul (a hand-written
// kernel, slow µs); the host waits for both.
func sameWorkTrace(slow float64) *trace.Trace {
	const dims, types = "[[1024, 1024], [1024, 1024]]", `["float", "float"]`
	b := tt.New()
	for s := range 3 {
		at := tt.Us(1000 * float64(s))
		b.Step(at, at+tt.Us(1000))
		b.Op("aten::mm", at, at+tt.Us(20)).Inputs(dims, types)
		b.Op("aten::matmul", at+tt.Us(20), at+tt.Us(40)).Inputs(dims, types)
		gpuBound(b, at, kernel{"ampere_sgemm_128x64_nn", 100}, kernel{"gemm_tiled_kernel", slow})
	}
	return b.Build()
}

func TestSameWorkSlowerBuilt(t *testing.T) {
	// 2·1024³ FLOPs a call: 21.5 TFLOP/s in 100µs, 7.2 in 300µs (3×).
	f := oneFinding(t, sameWorkTrace(300), SameWorkSlower)
	flops := 2.0 * 1024 * 1024 * 1024
	checkNear(t, "slow TFLOP/s", measureOf(t, f, "slower implementation TFLOP/s"), flops/300e-6/1e12)
	checkNear(t, "fast TFLOP/s", measureOf(t, f, "faster implementation TFLOP/s"), flops/100e-6/1e12)
	checkNear(t, "slow GPU time", measureOf(t, f, "slower implementation GPU time per step"), 300)
	// Run at the faster rate the 300µs take 100µs: 200µs saved a step, all
	// on the critical path (the host waits for it).
	checkNear(t, "saving", f.SavingUs, 200)
	// 150µs: 1.5× slower, under SameWorkFindingGap.
	noFinding(t, sameWorkTrace(150), SameWorkSlower)
}

// TestSameWorkSlowerNotAConvolution: a GEMM-named kernel a convolution op
// launched (cuDNN's implicit_convolve_sgemm under aten::cudnn_convolution
// in sync_eval's first conv, 128×3×96×96 input) computes the convolution,
// not the step's one GEMM shape (its Linear's [128×128]·[128×10]): it is
// no opless kernel, and no finding compares it with aten::addmm (it read
// "85.9× slower", saving 272 µs a step).
func TestSameWorkSlowerNotAConvolution(t *testing.T) {
	r := run(t, "recorded/pairs/sync_eval_base.json.gz")
	if f := findingOf(r, SameWorkSlower.Name); f != nil {
		t.Errorf("same-work-slower: %s", f.Title)
	}
	for _, row := range r.Roofline {
		if strings.Contains(row.Kernel, "implicit_convolve_sgemm") {
			t.Errorf("roofline row %s %s for a convolution's kernel (%s)", row.Op, row.Shape, row.FLOPsSource)
		}
	}
}

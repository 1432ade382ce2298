package analyze

import (
	"strings"
	"testing"

	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
)

// sdpaTrace is 3 steps, each a scaled_dot_product_attention call on bf16
// inputs (batch 2, 8 heads, 128 tokens, head dim 64) that ran the math
// backend (two bmm of 100µs × scale, a softmax of 50µs × scale) and a
// 250µs GEMM after it; the host waits for them.
func sdpaTrace(scale float64) *trace.Trace {
	b := tt.New()
	for s := range 3 {
		at := tt.Us(1000 * float64(s))
		b.Step(at, at+tt.Us(1000))
		b.Op("aten::scaled_dot_product_attention", at, at+tt.Us(60))
		b.Op(sdpaMathOp, at, at+tt.Us(60)).Inputs("[[2, 8, 128, 64], [2, 8, 128, 64], [2, 8, 128, 64], []]",
			`["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", ""]`)
		gpuBoundOps(b, at, opKernel{"aten::bmm", "ampere_bf16_s16816gemm_bf16_128x64_nn", 100 * scale},
			opKernel{"aten::_softmax", "cunn_SoftMaxForward", 50 * scale}, opKernel{"aten::bmm", "ampere_bf16_s16816gemm_bf16_128x64_nn", 100 * scale}, opKernel{"aten::mm", "ampere_bf16_s16816gemm_bf16_256x128_nn", 250})
	}
	return b.Build()
}

func TestAttentionBackendBuilt(t *testing.T) {
	// 250µs of the math path in 500µs of kernels a steady step; on an
	// unknown device there is no fused estimate to subtract.
	f := oneFinding(t, sdpaTrace(1), AttentionBackend)
	checkNear(t, "math per step", measureOf(t, f, "math backend GPU time per step"), 250)
	checkNear(t, "calls per step", measureOf(t, f, "calls per step"), 1)
	if !strings.Contains(f.Evidence[0].Text+f.Evidence[1].Text, "FLASH_ATTENTION") {
		t.Errorf("bf16, head dim 64, no mask: flash should accept them; evidence %+v", f.Evidence[:2])
	}
	// A twentieth of that: 12.5µs of 262.5µs (4.8%), under
	// SDPAMathMinShare.
	noFinding(t, sdpaTrace(0.05), AttentionBackend)
}

package analyze

import (
	"testing"

	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
)

// attentionTrace is 3 steps, each a 100µs GEMM under op (Q·Kᵀ under
// aten::matmul), a 20µs scale (aten::div), a 30µs softmax and a second
// GEMM under op (·V); the host waits for them.
func attentionTrace(op string) *trace.Trace {
	b := tt.New()
	for s := range 3 {
		at := tt.Us(1000 * float64(s))
		b.Step(at, at+tt.Us(1000))
		gpuBoundOps(b, at, opKernel{op, "ampere_bf16_s16816gemm_bf16_128x64_nn", 100}, opKernel{"aten::div", "vectorized_elementwise_kernel", 20},
			opKernel{"aten::softmax", "cunn_SoftMaxForward", 30}, opKernel{op, "ampere_bf16_s16816gemm_bf16_128x64_nn", 100})
	}
	return b.Build()
}

func TestUnfusedAttentionBuilt(t *testing.T) {
	// Once a step: the scale and softmax (50µs, 2 launches) between the
	// two matmuls.
	f := oneFinding(t, attentionTrace("aten::matmul"), UnfusedAttention)
	checkNear(t, "occurrences", measureOf(t, f, "occurrences"), 3)
	checkNear(t, "between", measureOf(t, f, "GPU time between the matmuls"), 3*50)
	checkNear(t, "launches", measureOf(t, f, "launches between the matmuls"), 3*2)
	// The same kernels between two linear layers' GEMMs (aten::addmm): a
	// softmax inside an MLP is no attention score matrix.
	noFinding(t, attentionTrace("aten::addmm"), UnfusedAttention)
}

package analyze

import (
	"testing"

	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
)

// optimizerTrace is 3 steps of 1000µs: a 300µs kernel the host waits for,
// then torch.optim's AdamW step from 400µs to 800µs launching 10 kernels
// of 5µs, one every 40µs, under op (aten::_foreach_add_ for the foreach
// path, aten::_fused_adamw_ for the fused one).
func optimizerTrace(op string) *trace.Trace {
	b := tt.New()
	for s := range 3 {
		at := tt.Us(1000 * float64(s))
		b.Step(at, at+tt.Us(1000))
		gpuBound(b, at, kernel{"gemm_kernel", 300})
		b.Range("Optimizer.step#AdamW.step", at+tt.Us(400), at+tt.Us(800))
		b.Op(op, at+tt.Us(400), at+tt.Us(800))
		train(b, "multi_tensor_apply_kernel", at+tt.Us(400), 10, 40, 20, 5)
	}
	return b.Build()
}

func TestOptimizerStepBuilt(t *testing.T) {
	// 400µs of host time in the step; its kernels run 10 × 5µs, so the GPU
	// idles 350µs of it.
	f := oneFinding(t, optimizerTrace("aten::_foreach_add_"), OptimizerStep)
	checkNear(t, "host", measureOf(t, f, "optimizer host time per step"), 400)
	checkNear(t, "idle", measureOf(t, f, "GPU idle in it per step"), 350)
	checkNear(t, "median step", measureOf(t, f, "median step"), 1000)
	// The same idle under a fused optimizer: nothing left to fuse.
	noFinding(t, optimizerTrace("aten::_fused_adamw_"), OptimizerStep)
}

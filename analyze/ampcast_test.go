package analyze

import (
	"testing"

	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
)

// ampTrace is 3 steps, each an aten::linear of a [64, 512] input and a
// [256, 512] weight under autocast: a 20µs fp32→bf16 cast (aten::_to_copy)
// of a tensor of dims cast, then the 200µs GEMM; the host waits for both.
func ampTrace(cast string) *trace.Trace {
	b := tt.New()
	for s := range 3 {
		at := tt.Us(1000 * float64(s))
		b.Step(at, at+tt.Us(1000))
		b.Op("aten::linear", at, at+tt.Us(40)).Inputs("[[64, 512], [256, 512], [256]]", `["float", "float", "float"]`)
		b.Op("aten::_to_copy", at, at+tt.Us(20)).Inputs("["+cast+"]", `["float"]`)
		gpuBoundOps(b, at, opKernel{"", "bfloat16_copy_kernel_cuda", 20}, opKernel{"aten::addmm", "ampere_bf16_s16816gemm_bf16_128x64_nn", 200})
	}
	return b.Build()
}

func TestAMPCastBuilt(t *testing.T) {
	// The weight's cast: one a step, 20µs of 220µs busy.
	f := oneFinding(t, ampTrace("[256, 512]"), AMPCast)
	checkNear(t, "casts", measureOf(t, f, "casts per step"), 1)
	checkNear(t, "cast time", measureOf(t, f, "cast kernel time per step"), 20)
	checkNear(t, "busy", measureOf(t, f, "GPU busy per step"), 220)
	// Casting the input activation is autocast doing its job.
	noFinding(t, ampTrace("[64, 512]"), AMPCast)
}

package analyze

import (
	"testing"

	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
)

// epilogueTrace is 3 steps, each a forward 200µs GEMM (aten::mm), a 30µs
// add whose second operand has dims second (a [256] bias is broadcast; a
// [64, 256] tensor is a residual) and a 20µs GELU; the host waits for them.
func epilogueTrace(second string) *trace.Trace {
	b := tt.New()
	for s := range 3 {
		at := tt.Us(1000 * float64(s))
		b.Step(at, at+tt.Us(1000))
		b.Op("aten::add", at+tt.Us(20), at+tt.Us(40)).Inputs("[[64, 256], "+second+"]", `["float", "float"]`)
		gpuBoundOps(b, at, opKernel{"aten::mm", "ampere_sgemm_64x64_nn", 200}, opKernel{"", "vectorized_elementwise_kernel", 30},
			opKernel{"aten::gelu", "vectorized_elementwise_kernel", 20})
	}
	return b.Build()
}

func TestGEMMEpilogueBuilt(t *testing.T) {
	// The bias add and the GELU after it: 50µs of the step's 250µs busy.
	f := oneFinding(t, epilogueTrace("[256]"), GEMMEpilogue)
	checkNear(t, "GEMMs", measureOf(t, f, "GEMMs with a separate epilogue per step"), 1)
	checkNear(t, "epilogue time", measureOf(t, f, "epilogue kernel time per step"), 50)
	checkNear(t, "busy", measureOf(t, f, "GPU busy per step"), 250)
	// A residual add of two full matrices is no epilogue, and the GELU
	// no longer follows the GEMM directly.
	noFinding(t, epilogueTrace("[64, 256]"), GEMMEpilogue)
}

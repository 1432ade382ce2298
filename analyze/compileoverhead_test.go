package analyze

import (
	"testing"

	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
)

// compileTrace is 3 steps of 1000µs, each a 200µs kernel the host waits
// for; the first step recompiles frame 0 for compile µs after its kernel
// (an Inductor range naming compile_id=0/1).
func compileTrace(compile float64) *trace.Trace {
	b := tt.New()
	for s := range 3 {
		at := tt.Us(1000 * float64(s))
		b.Step(at, at+tt.Us(1000))
		end := gpuBound(b, at, kernel{"gemm_kernel", 200})
		if s == 0 {
			b.Range("entire_frame_compile compile_id=0/1", end+tt.Us(10), end+tt.Us(10+compile))
		}
	}
	return b.Build()
}

func TestCompileOverheadBuilt(t *testing.T) {
	// 500µs of compilation in 3000µs traced.
	f := oneFinding(t, compileTrace(500), CompileOverhead)
	checkNear(t, "compile time", measureOf(t, f, "compile time"), 500)
	checkNear(t, "traced wall", measureOf(t, f, "traced wall time"), 3000)
	checkNear(t, "compilations", measureOf(t, f, "compilations"), 1)
	checkNear(t, "recompilations", measureOf(t, f, "recompilations"), 1)
	// 100µs: 3.3% of the traced time, under CompileMinShare.
	noFinding(t, compileTrace(100), CompileOverhead)
}

package analyze

import (
	"testing"

	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
)

// hookTrace is 3 steps of 1000µs: a kernel of run µs launched at the start
// (20µs call), then a module call whose hook dispatch (module.py's inner,
// 300µs→700µs) runs its forward (310→400µs) and a forward hook of the
// user's (410→690µs), with no framework op inside.
func hookTrace(run float64) *trace.Trace {
	b := tt.New()
	for s := range 3 {
		at := tt.Us(1000 * float64(s))
		b.Step(at, at+tt.Us(1000))
		b.Launch("cudaLaunchKernel", at, at+tt.Us(20)).Kernel("gemm_kernel", at+tt.Us(20), at+tt.Us(20+run))
		b.Frame("torch/nn/modules/module.py(1561): inner", at+tt.Us(300), at+tt.Us(700))
		b.Frame("model.py(20): forward", at+tt.Us(310), at+tt.Us(400))
		b.Frame("model.py(40): log_hook", at+tt.Us(410), at+tt.Us(690))
	}
	return b.Build()
}

func TestHookOverheadBuilt(t *testing.T) {
	// The hook: 280µs a call, all Python, the GPU idle throughout (its
	// kernel ended at 220µs); dispatch: inner's 400µs less its callees'
	// 370µs.
	f := oneFinding(t, hookTrace(200), HookOverhead)
	checkNear(t, "calls", measureOf(t, f, "hook calls"), 3)
	checkNear(t, "CPU", measureOf(t, f, "hook CPU time"), 3*280)
	checkNear(t, "Python overhead", measureOf(t, f, "Python overhead"), 3*280)
	checkNear(t, "dispatch", measureOf(t, f, "dispatch overhead"), 3*30)
	checkNear(t, "idle", measureOf(t, f, "GPU idle while hooks run"), 3*280)
	// With the GPU busy through the hook (an 800µs kernel), its Python
	// time costs the step nothing.
	noFinding(t, hookTrace(800), HookOverhead)
}

package analyze

import (
	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
	"strings"
	"testing"
)

// TestHostBoundAgainstScript: host-bound fires exactly where
// fixtures/recorded/expect/hostbound.py's rule does (stdlib Python over the
// JSON: few launches, GPU mostly idle in short gaps), with its short-gap
// idle per step as the saving: a PyTorch eager step (fp64_simulation), a
// JAX jit call, CUDA captures of three and twelve launches; not on
// launch-bound, GPU-bound or data-loading steps.
func TestHostBoundAgainstScript(t *testing.T) {
	var want map[string]struct {
		HostBound bool    `json:"host_bound"`
		Short     float64 `json:"short"`
		Wall      float64 `json:"wall"`
		Busy      float64 `json:"busy"`
	}
	readExpected(t, "hostbound.json", &want)
	fired := 0
	for name, w := range want {
		r := run(t, name)
		f := findingOf(r, HostBound.Name)
		if (f != nil) != w.HostBound {
			t.Errorf("%s: host-bound fired %v, script says %v", name, f != nil, w.HostBound)
			continue
		}
		if f == nil {
			continue
		}
		fired++
		if !near(f.SavingUs, w.Short) || !near(r.StepStats.SteadyWallUs, w.Wall) || !near(r.StepStats.SteadyGPUBusyUs, w.Busy) {
			t.Errorf("%s: saving %.3f (step %.3f busy %.3f), want %.3f (%.3f, %.3f)", name, f.SavingUs, r.StepStats.SteadyWallUs,
				r.StepStats.SteadyGPUBusyUs, w.Short, w.Wall, w.Busy)
		}
		if r.Summary.Framework == "JAX" && (!strings.Contains(f.Fix, "lax.scan") || strings.Contains(f.Fix, "torch")) {
			t.Errorf("%s: fix not in JAX's terms: %s", name, f.Fix)
		}
	}
	if fired < 3 {
		t.Errorf("host-bound fired on %d traces of the class: the test proves little", fired)
	}
}

// hostBoundTrace is 3 steps of wall µs, each launching 10 kernels of 10µs
// one every 45µs from the step's start (30µs calls).
func hostBoundTrace(wall float64) *trace.Trace {
	b := tt.New()
	for s := range 3 {
		at := tt.Us(wall * float64(s))
		b.Step(at, at+tt.Us(wall))
		train(b, "vectorized_elementwise_kernel", at, 10, 45, 30, 10)
	}
	return b.Build()
}

func TestHostBoundBuilt(t *testing.T) {
	// In a 500µs step the GPU runs 100µs and waits in short gaps only:
	// 30µs before the first kernel, 9 × 35µs between, 55µs after the last.
	f := oneFinding(t, hostBoundTrace(500), HostBound)
	checkNear(t, "short-gap idle", measureOf(t, f, "short-gap idle per step"), 30+9*35+55)
	checkNear(t, "GPU busy", measureOf(t, f, "GPU busy"), 100.0/500)
	checkNear(t, "launches", measureOf(t, f, "launches per step"), 10)
	// In a 1000µs step the same work leaves one 555µs wait after the last
	// kernel, longer than the 345µs of short gaps: gpu-idle's story.
	noFinding(t, hostBoundTrace(1000), HostBound)
}

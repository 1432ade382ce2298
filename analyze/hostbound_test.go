package analyze

import (
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

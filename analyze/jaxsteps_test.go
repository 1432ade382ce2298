package analyze

import (
	"strings"
	"testing"
)

// TestJAXStepsFromRepeatedJitCalls: a JAX trace marks no steps and its
// profiler records no Python calls; the repeated calls of one jitted
// function (PjitFunction(fwd), recorded twice, one inside the other) are
// its steps, so the first call is told from the steady state. Expected
// values: fixtures/recorded/expect/jax_steps.py over the JSON.
func TestJAXStepsFromRepeatedJitCalls(t *testing.T) {
	var want map[string]struct {
		Label      string  `json:"label"`
		Steps      int     `json:"steps"`
		SteadyWall float64 `json:"steady_wall"`
		SteadyBusy float64 `json:"steady_busy"`
		FirstWall  float64 `json:"first_wall"`
	}
	readExpected(t, "jax_steps.json", &want)
	if len(want) < 2 {
		t.Fatalf("jax_steps.json has %d JAX traces: the class needs more than one", len(want))
	}
	for path, w := range want {
		name := strings.TrimPrefix(path, "fixtures/")
		r := run(t, name)
		s := r.Summary
		if s.StepSource != StepSourceJit || s.StepLabel != w.Label || len(r.Steps) != w.Steps {
			t.Fatalf("%s: steps from %s %q ×%d, want %s %q ×%d", name, s.StepSource, s.StepLabel, len(r.Steps), StepSourceJit, w.Label, w.Steps)
		}
		ss := r.StepStats
		if !near(ss.SteadyWallUs, w.SteadyWall) || !near(ss.SteadyGPUBusyUs, w.SteadyBusy) || !near(ss.FirstStepUs, w.FirstWall) {
			t.Errorf("%s: step %.3f µs busy %.3f first %.3f; want %.3f, %.3f, %.3f", name, ss.SteadyWallUs, ss.SteadyGPUBusyUs, ss.FirstStepUs,
				w.SteadyWall, w.SteadyBusy, w.FirstWall)
		}
		// Where the first call is slow (jax_eggroll 2.63 ms against 272
		// µs), the cold start names it in JAX's terms.
		f := findingOf(r, ColdStart.Name)
		if f == nil && name == "jax_eggroll.perfetto.json.gz" {
			t.Errorf("%s: no cold start", name)
		}
		if f != nil && (!strings.Contains(f.Title, "call of "+w.Label) || strings.Contains(f.Title+f.Fix, "torch")) {
			t.Errorf("%s: cold start %q: want the first jit call named, in JAX's terms", name, f.Title)
		}
	}
}

package analyze

import (
	"math"
	"strings"
	"testing"
)

// issue22Want is a trace's entry in issue22.json (expect/issue22.py, from
// the recorder's own knowledge of its loop): the true iterations, or the
// ProfilerStep numbers.
type issue22Want struct {
	Iterations *struct {
		Count      int    `json:"count"`
		FirstRange string `json:"first_range"`
		Iterations []struct {
			StartTs float64 `json:"start_ts"`
		} `json:"iterations"`
	} `json:"iterations"`
	ProfilerSteps []struct {
		N int `json:"n"`
	} `json:"profiler_steps"`
}

// TestStepLoopIssue22: on every issue-22 trace the steps are the loop's
// true iterations (count, and starts within 1 µs), digit variants are not
// merged, and a single profiled step is the steady step.
func TestStepLoopIssue22(t *testing.T) {
	var all map[string]issue22Want
	readExpected(t, "issue22.json", &all)
	for _, base := range []string{"loop_subranges_mlp", "loop_subranges_sim", "digit_variants_dtype", "digit_variants_stage",
		"schedule_wait_warm", "schedule_single_active", "jax_two_jits.perfetto", "jax_loop_inner.perfetto"} {
		name := "recorded/issue22/" + base + ".json.gz"
		w, ok := all[base+".json.gz"]
		if !ok {
			t.Fatalf("issue22.json has no %s", base)
		}
		t.Run(base, func(t *testing.T) {
			c, _, label := deriveSteps(load(t, name))
			r := run(t, name)
			if err := Check(r); err != nil {
				t.Error(err)
			}
			if it := w.Iterations; it != nil {
				if len(c.Steps) != it.Count {
					t.Fatalf("%d steps (%q), want %d iterations", len(c.Steps), label, it.Count)
				}
				for i, st := range c.Steps {
					if math.Abs(micros(st.Start)-it.Iterations[i].StartTs) > 1 {
						t.Errorf("step %d starts at %.3f µs, want %.3f", i, micros(st.Start), it.Iterations[i].StartTs)
					}
				}
				if !strings.HasPrefix(label, it.FirstRange) || strings.Contains(label, "*") {
					t.Errorf("label %q: want the iteration from %q on, names not merged", label, it.FirstRange)
				}
				return
			}
			if len(r.Steps) != len(w.ProfilerSteps) {
				t.Fatalf("%d steps, want %d ProfilerSteps", len(r.Steps), len(w.ProfilerSteps))
			}
			for i, s := range r.Steps {
				if s.Number != w.ProfilerSteps[i].N {
					t.Errorf("step %d is #%d, want #%d", i, s.Number, w.ProfilerSteps[i].N)
				}
			}
			s := r.Summary
			if s.ProfiledFrom != w.ProfilerSteps[0].N || s.FirstStepIsFirstExecution != (w.ProfilerSteps[0].N == 0) {
				t.Errorf("profiled from %d, first execution %v", s.ProfiledFrom, s.FirstStepIsFirstExecution)
			}
			if findingOf(r, ColdStart.Name) != nil {
				t.Error("cold start on a trace whose first profiled step is not the first execution")
			}
			if len(r.Steps) == 1 && (r.StepStats.SteadySteps != 1 || r.StepStats.SteadyWallUs != r.Steps[0].WallUs) {
				t.Errorf("single step: steady %d steps, %v µs; want the step itself (%v µs)", r.StepStats.SteadySteps, r.StepStats.SteadyWallUs, r.Steps[0].WallUs)
			}
		})
	}
}

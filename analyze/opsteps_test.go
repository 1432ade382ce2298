package analyze

import (
	"math"
	"testing"
)

// TestOpsPerStepAgainstScript compares each op's calls and CPU time per
// step (OpStat.PerStep, what diff compares) with
// fixtures/recorded/expect/op_steps.py, computed straight from the JSON, on
// five real traces: warm-up and time outside the steps are not spread over
// the steps.
func TestOpsPerStepAgainstScript(t *testing.T) {
	var want map[string]struct {
		Steps int                    `json:"steps"`
		Ops   map[string][]StepShare `json:"ops"`
	}
	readExpected(t, "op_steps.json", &want)
	if len(want) < 5 {
		t.Fatalf("op_steps.json has %d traces", len(want))
	}
	for name, w := range want {
		r := run(t, name)
		if len(r.Steps) != w.Steps {
			t.Errorf("%s: %d steps, script %d", name, len(r.Steps), w.Steps)
			continue
		}
		got := map[string][]StepShare{}
		for _, op := range r.Ops {
			got[op.Name] = op.PerStep
			if len(op.PerStep) != len(r.Steps) {
				t.Errorf("%s %s: %d per-step entries for %d steps", name, op.Name, len(op.PerStep), len(r.Steps))
			}
		}
		if len(got) != len(w.Ops) {
			t.Errorf("%s: %d ops, script %d", name, len(got), len(w.Ops))
		}
		for op, ws := range w.Ops {
			gs, ok := got[op]
			if !ok || len(gs) != len(ws) {
				t.Errorf("%s %s: per step %v, script %v", name, op, gs, ws)
				continue
			}
			for i := range ws {
				if gs[i].Count != ws[i].Count || math.Abs(gs[i].Us-ws[i].Us) > 0.002 {
					t.Errorf("%s %s step %d: %d calls %.3f µs, script %d %.3f", name, op, i, gs[i].Count, gs[i].Us, ws[i].Count, ws[i].Us)
				}
			}
		}
		for _, a := range r.Annotations {
			n := 0
			for _, st := range a.PerStep {
				n += st.Count
			}
			if len(a.PerStep) != len(r.Steps) || n > a.Count {
				t.Errorf("%s annotation %s: %d in steps of %d", name, a.Name, n, a.Count)
			}
		}
	}
}

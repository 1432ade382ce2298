package distributed

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// TestStragglerPattern: step by step, the rank the others wait for and by
// how much agree with fixtures/recorded/expect/ranks.py's per-step waits
// (on 2 ranks, one rank's lateness is the other's wait); the host and
// compute stragglers are steady, the FSDP run, where rank 1 is late in one
// step and rank 0 in the next three, is shifting, and says so in its
// title and fix.
func TestStragglerPattern(t *testing.T) {
	raw, err := os.ReadFile("../fixtures/recorded/expect/expected.json")
	if err != nil {
		t.Skip(err)
	}
	var exp map[string]struct {
		WaitPerStep []map[string]float64 `json:"wait_per_step_us"`
	}
	if err := json.Unmarshal(raw, &exp); err != nil {
		t.Fatal(err)
	}
	dirs := runDirs(t)
	for name, kind := range map[string]string{"ddp_host_straggler": SteadyStraggler, "ddp_compute_straggler": SteadyStraggler, "multirank_fsdp": ShiftingStraggler} {
		dir, ok := dirs[name]
		if !ok {
			continue
		}
		run, err := Load([]string{dir}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		sc, _ := run.Straggler()
		p := run.stepPattern(sc.Index, sc.Step)
		if p.Kind != kind {
			t.Errorf("%s: pattern %s, want %s (%s)", name, p.Kind, kind, run.describe(p))
		}
		want := exp["runs/"+name].WaitPerStep
		if len(want) != len(p.Late) {
			t.Fatalf("%s: %d steps, script %d", name, len(p.Late), len(want))
		}
		for i, l := range p.Late {
			// The late rank is the one that did not wait; its lateness
			// is the other's wait.
			w0, w1 := want[i]["0"], want[i]["1"]
			late, by := 1, w0
			if w1 > w0 {
				late, by = 0, w1
			}
			threshold := max(0.1*sc.Step.Micros(), 500)
			if by < threshold {
				if l.Rank >= 0 {
					t.Errorf("%s step %d: rank %d late by %v, script: nobody over %.0f µs", name, i+1, run.Ranks[l.Rank].Rank, l.Late, threshold)
				}
				continue
			}
			if l.Rank < 0 || run.Ranks[l.Rank].Rank != late || math.Abs(l.Late.Micros()-by) > 0.01*by+50 {
				t.Errorf("%s step %d: late %+v, script: rank %d by %.1f µs", name, i+1, l, late, by)
			}
		}
		res := Analyze(run, nil, Options{})
		if kind == ShiftingStraggler && (res.Findings[0].ID != IDStraggler || res.Findings[0].Confidence != "medium" || res.Findings[0].Ranks[0] != run.Ranks[sc.Index].Rank) {
			t.Errorf("%s: %+v", name, res.Findings[0].Finding)
		}
		t.Logf("%s: %s (%s)", name, p.Kind, run.describe(p))
	}
}

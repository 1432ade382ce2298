package distributed

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/fixtures/genranks"
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
		run, sc, p := patternOf(t, dir)
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

// TestGeneratedShiftingAndTransient: runs made from the real DDP ranks
// with a host delay of 8 ms in some steps only. Rank 1 late in steps 1–2
// and rank 0 in steps 3–5, in a range of the user's own code, is a
// shifting straggler whose fix is not an input pipeline's; rank 2 of 4
// late in steps 2 and 4 only is transient. Each step's late rank and
// lateness are the injected ones.
func TestGeneratedShiftingAndTransient(t *testing.T) {
	srcs := sourceRanks(t)
	const delay = 8_000_000
	cases := []struct {
		name  string
		ranks int
		late  []int
		rng   string
		kind  string
	}{
		{"shifting", 2, []int{1, 1, 0, 0, 0}, "train.log_metrics", ShiftingStraggler},
		{"transient", 4, []int{-1, 2, -1, 2, -1}, "checkpoint.save", TransientStraggler},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			lateIn := func(step int) int {
				if step < len(c.late) {
					return c.late[step]
				}
				return -1
			}
			if _, err := genranks.Generate(dir, srcs, genranks.Options{Ranks: c.ranks, Size: 1, Straggler: -1, Delay: delay, LateIn: lateIn, Range: c.rng}); err != nil {
				t.Fatal(err)
			}
			run, err := Load([]string{dir}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			sc, ok := run.Straggler()
			if !ok || !sc.Is {
				t.Fatalf("no straggler: %+v", sc)
			}
			p := run.stepPattern(sc.Index, sc.Step)
			if p.Kind != c.kind || len(p.Late) != len(c.late) {
				t.Fatalf("pattern %s over %d steps (%s), want %s over %d", p.Kind, len(p.Late), run.describe(p), c.kind, len(c.late))
			}
			for i, l := range p.Late {
				want := c.late[i]
				if want < 0 {
					if l.Rank >= 0 {
						t.Errorf("step %d: rank %d late by %v, none injected", i+1, run.Ranks[l.Rank].Rank, l.Late)
					}
					continue
				}
				// The delay, plus or minus the source ranks' own
				// imbalance (under 2 ms a step in the real DDP run).
				if l.Rank < 0 || run.Ranks[l.Rank].Rank != want || l.Late < 6_000_000 || l.Late > 10_000_000 {
					t.Errorf("step %d: late %+v, want rank %d by about 8 ms", i+1, l, want)
				}
			}
			res := Analyze(run, ReadRankTrace, Options{})
			f := res.Findings[0]
			if f.ID != IDStraggler || f.Confidence != "medium" || !strings.HasPrefix(f.Fix, "No rank is late every step") ||
				strings.Contains(f.Fix, "DataLoader") || !strings.Contains(f.Fix, c.rng) {
				t.Errorf("finding %q, confidence %s, fix %q", f.Title, f.Confidence, f.Fix)
			}
			t.Logf("%s: %s", c.name, f.Title)
		})
	}
}

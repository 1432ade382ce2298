package report

import (
	"strings"
	"testing"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/ingest"
)

// TestReportPrintsAnalyzeFigures: the report quotes analyze's derived
// figures (step spread, first step ratio, launch calls' share of idle,
// median rows, phase shares, compute share, GPU activity time, costliest
// range, same-work comparison) rather than computing its own. Each is
// replaced in a real trace's Result by a value no computation over the
// trace gives; the report must print exactly those values.
func TestReportPrintsAnalyzeFigures(t *testing.T) {
	for _, name := range []string{"eggroll_hooks.json.gz", "recorded/amp_gpt_foreach.json.gz", "runs/multirank_ddp/rank0.pt.trace.json.gz"} {
		t.Run(name, func(t *testing.T) {
			tr, err := ingest.ReadFile("../fixtures/"+name, ingest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			r, err := analyze.Run(tr, analyze.Config{})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Steps) < 3 {
				t.Fatalf("%d steps: the figures need three", len(r.Steps))
			}
			ss := &r.StepStats
			ss.MinWallUs, ss.MinWallStep, ss.MaxWallUs, ss.MaxWallStep = 1111.1, 91, 8888.8, 92
			ss.WallSpread = 0.4321
			ss.FirstStepRatio, ss.WarmUp = 7.77, true
			ss.Median.WallUs, ss.MedianNoFirst.WallUs = 87654, 76543
			ss.SteadyLaunchAPIIdleShare, ss.SteadyGPUIdleUs = 0.0123, 55555
			ss.SteadyGPUIdleShare = 0.9876
			ss.SteadyComputeShare = 0.3456
			ss.ForwardShare, ss.BackwardShare, ss.OptimizerShare = 0.111, 0.222, 0.667
			r.Summary.GPUActivityUs = 43210
			r.TopRange = &analyze.RangeLead{Name: "fake_range", Count: 3, GPUUs: 3000, Next: "other_range", NextGPUUs: 1000, Ratio: 6.54}
			r.SameWork = []analyze.SameWork{{Shape: "[7, 7]", DType: "bf16", Fast: "aten::fast", FastTFLOPS: 100, FastEfficiency: 0.5,
				Slow: "aten::slow", SlowTFLOPS: 10, SlowEfficiency: 0.05, Speedup: 8.76}}
			md := markdown(t, Input{Trace: tr, Result: r})
			want := []string{
				"Wall time ranges from 1.11ms (#91) to 8.89ms (#92), a spread of 43.2% of the median.",
				"The first step is 7.77× the median of the others: warm-up",
				"7.8× the median of the others",
				us(87654), us(76543),
				"8.8× slower",
			}
			switch {
			case r.Summary.CommunicationUs > 0:
				want = append(want, "GPU computes 34.6% of")
			case r.StepStats.SteadyGPUBusyShare < 0.5:
				want = append(want, "GPU idle 98.8% of", "launch calls explain only 1.2% of the 55.6ms idle")
			}
			if r.HasPhaseSplit() {
				want = append(want, "(11.1% / 22.2% / 66.7%)")
			}
			if len(r.Categories) > 0 {
				want = append(want, "of "+us(43210)+"); the top kernel")
			}
			for _, w := range want {
				if !strings.Contains(md, w) {
					t.Errorf("the report lacks analyze's figure %q", w)
				}
			}
			// The summary keeps six bullets: without the same-work
			// and roofline ones the costliest range shows.
			r.SameWork, r.Roofline = nil, nil
			if md := markdown(t, Input{Trace: tr, Result: r}); !strings.Contains(md, "**`fake_range` is the costliest range**: 3.00ms of GPU time over 3 calls, 6.5× the next, `other_range` (1.00ms).") {
				t.Errorf("the report lacks analyze's costliest range:\n%s", md[:2500])
			}
		})
	}
}

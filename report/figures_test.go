package report

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/ingest"
)

// loadFile reads and analyzes a trace under fixtures/ by its path there
// (recorded/… and runs/… are not embedded).
func loadFile(t *testing.T, name string) Input {
	t.Helper()
	tr, err := ingest.ReadFile("../fixtures/"+name, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Trace: tr}
	if in.Result, err = analyze.Run(tr, analyze.Config{}); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return in
}

// TestReportPrintsAnalyzeFigures: the report quotes analyze's derived
// figures (step spread, first step ratio, launch calls' share of idle and
// cost per launch, mean kernel,
// median rows, phase shares, compute share, the steady step's top
// category,
// kernels' cumulative share, costliest
// range, same-work comparison) rather than computing its own. Each is
// replaced in a real trace's Result by a value no computation over the
// trace gives; the report must print exactly those values.
func TestReportPrintsAnalyzeFigures(t *testing.T) {
	for _, name := range []string{"eggroll_hooks.json.gz", "recorded/amp_gpt_foreach.json.gz", "runs/multirank_ddp/rank0.pt.trace.json.gz"} {
		t.Run(name, func(t *testing.T) {
			in := loadFile(t, name)
			tr, r := in.Trace, in.Result
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
			ss.SteadyLaunchAPIPerLaunchUs, ss.SteadyKernelMeanUs = 3.21, 6.54
			ss.SteadyComputeShare = 0.3456
			ss.ForwardShare, ss.BackwardShare, ss.OptimizerShare = 0.111, 0.222, 0.667
			r.Summary.GPUActivityUs = 43210
			top := min(len(r.Kernels), DefaultTopKernels)
			r.Kernels[top-1].CumulativeShare = 0.7777
			r.TopRange = &analyze.RangeLead{Name: "fake_range", Count: 3, GPUUs: 3000, Next: "other_range", NextGPUUs: 1000, Ratio: 6.54}
			r.SameWork = []analyze.SameWork{{Shape: "[7, 7]", DType: "bf16", Fast: "aten::fast", FastTFLOPS: 100, FastEfficiency: 0.5,
				Slow: "aten::slow", SlowTFLOPS: 10, SlowEfficiency: 0.05, Speedup: 8.76}}
			if sc := r.StepStats.SteadyCategories; len(sc) > 0 {
				sc[0].Us, sc[0].Share = 43210, 0.4321
			}
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
				want = append(want, "GPU idle 98.8% of", "launch calls explain only 1.2% of the 55.6ms idle", "(3.21µs each) for kernels averaging 6.54µs")
			}
			if r.HasPhaseSplit() {
				want = append(want, "(11.1% / 22.2% / 66.7%)")
			}
			want = append(want, fmt.Sprintf("the top %d take 77.8%%.", top))
			if len(r.StepStats.SteadyCategories) > 0 {
				want = append(want, "take 43.2% of the step's GPU time** ("+us(43210)+" per step)")
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

// TestLaunchBulletAddsUp: the executive summary's "N launches taking T of
// CPU in launch calls (E each)" quotes one statistic, so N × E is T (within
// the printed digits) on real traces, JAX's (2 launches of jitted
// executables per step) and PyTorch's (35 per step) alike.
func TestLaunchBulletAddsUp(t *testing.T) {
	re := regexp.MustCompile(`(\d+) launches taking ([\d.]+)(µs|ms) of CPU in launch calls \(([\d.]+)(µs|ms) each\)`)
	for _, name := range []string{"jax_eggroll.perfetto.json.gz", "eggroll_hooks.json.gz"} {
		md := markdown(t, load(t, name))
		m := re.FindStringSubmatch(md)
		if m == nil {
			t.Errorf("%s: no launch bullet", name)
			continue
		}
		num := func(v, unit string) float64 {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			if unit == "ms" {
				f *= 1000
			}
			return f
		}
		n, total, each := num(m[1], ""), num(m[2], m[3]), num(m[4], m[5])
		if math.Abs(n*each-total) > 0.01*total {
			t.Errorf("%s: %v launches × %vµs each is not %vµs: %q", name, n, each, total, m[0])
		}
	}
}

// TestColdStartSaidOnce: where a cold-start finding reports the first
// step's cost (real JAX and eager traces), the executive summary does not
// repeat it as a warm-up bullet and the step breakdown points to the
// finding by its number; a trace whose first step is slow without a
// cold-start finding (eggroll_hooks, 1.32×) keeps the bullet.
func TestColdStartSaidOnce(t *testing.T) {
	for _, name := range []string{"jax_eggroll.perfetto.json.gz", "recorded/eager_sincos_calls.json.gz", "recorded/compiled_slower_gemm.json.gz", "eggroll_hooks.json.gz"} {
		in := loadFile(t, name)
		r := in.Result
		if !r.StepStats.WarmUp {
			t.Fatalf("%s: no warm-up (first step %.2f× the others)", name, r.StepStats.FirstStepRatio)
		}
		md := markdown(t, in)
		summary, _, _ := strings.Cut(md, "## Step breakdown")
		n := coldStartFinding(r)
		bullet := strings.Contains(summary, "**The first step takes")
		switch {
		case n == "" && name != "eggroll_hooks.json.gz":
			t.Errorf("%s: no cold-start finding", name)
		case n == "":
			if !bullet {
				t.Errorf("%s: warm-up without a cold-start finding, but no summary bullet", name)
			}
		default:
			if bullet {
				t.Errorf("%s: the summary repeats cold-start finding %s as a warm-up bullet", name, n)
			}
			if !strings.Contains(md, fmt.Sprintf("the median of the others: a cold start, excluded from the medians the summary quotes (finding %s).", n)) ||
				!strings.Contains(md, "#### "+n+" Cold start") {
				t.Errorf("%s: the step breakdown does not point to cold-start finding %s", name, n)
			}
		}
	}
}

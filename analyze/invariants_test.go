package analyze

import (
	"math"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// TestInvariantsOnEveryFixture checks, on every trace in fixtures/, what
// must hold whatever the trace: no roofline row above the device's peak,
// every share in [0, 1], each GPU activity in exactly one known category
// (categories add up to every activity and all GPU time), no saving above
// the step, the combined saving at most the step and the sum. The only
// correction Run may have made is hiding a roofline row above the peak (a
// FLOP attribution bug, reported in Corrections).
func TestInvariantsOnEveryFixture(t *testing.T) {
	for _, name := range fixtureNames(t) {
		t.Run(name, func(t *testing.T) {
			tr := load(t, name)
			r, err := Run(tr, Config{})
			if err != nil {
				t.Fatal(err)
			}
			if err := Check(r); err != nil {
				t.Error(err)
			}
			for _, c := range r.Corrections {
				if !strings.HasPrefix(c, "roofline row ") {
					t.Errorf("correction: %s", c)
				} else {
					t.Logf("correction: %s", c)
				}
			}
			checkCategoriesCoverEveryActivity(t, tr, r)
		})
	}
}

// checkCategoriesCoverEveryActivity counts GPU activities and their time
// straight from the trace and compares with the category table.
func checkCategoriesCoverEveryActivity(t *testing.T, tr *trace.Trace, r *Result) {
	t.Helper()
	var n int
	var total float64
	for _, c := range r.Categories {
		n += c.Count
		total += c.TotalUs
	}
	var want float64
	for i := range tr.GPU {
		want += tr.GPU[i].Dur().Micros()
	}
	if n != len(tr.GPU) || math.Abs(total-want) > 1e-6*max(want, 1) {
		t.Errorf("categories hold %d activities, %vµs; the trace has %d, %vµs", n, total, len(tr.GPU), want)
	}
}

// TestInvariantsAreEnforced feeds Run's last step impossible figures and
// checks that none survives and each is reported.
func TestInvariantsAreEnforced(t *testing.T) {
	r := &Result{
		Roofline:   []RooflineRow{{Op: "aten::linear", DType: "bf16", TFLOPS: 3013, PeakTFLOPS: 989, Efficiency: 3.05}, {Op: "aten::mm", TFLOPS: 500, PeakTFLOPS: 989, GBps: 100, PeakGBps: 3350, Efficiency: 0.5}},
		Kernels:    []Kernel{{KernelTiming: KernelTiming{Name: "k", Share: 1.3}, Category: CategoryGEMM}},
		Categories: []CategoryTime{{Category: CategoryGEMM, Count: 1, Share: -0.1}},
		StepStats:  StepStats{SteadyWallUs: 100, SteadyGPUBusyShare: math.NaN()},
		Findings:   []Finding{{ID: "a", SavingUs: 119, Share: 1.19}},
		Summary:    Summary{CombinedSavingUs: 150, CombinedSavingShare: 1.5},
	}
	enforceInvariants(r, 1)
	if err := Check(r); err != nil {
		t.Errorf("after enforcing: %v", err)
	}
	if len(r.Roofline) != 1 || r.Roofline[0].Op != "aten::mm" {
		t.Errorf("roofline %+v, want only the row under the peak", r.Roofline)
	}
	if r.Findings[0].SavingUs != 100 || r.Summary.CombinedSavingUs != 100 {
		t.Errorf("saving %v, combined %v: want both capped at the 100µs step", r.Findings[0].SavingUs, r.Summary.CombinedSavingUs)
	}
	if len(r.Corrections) < 7 {
		t.Errorf("%d corrections, want one per impossible figure:\n%s", len(r.Corrections), strings.Join(r.Corrections, "\n"))
	}
}

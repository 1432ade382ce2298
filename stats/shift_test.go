package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestShiftIntervalPublished checks the estimate and interval against
// published output for Hollander & Wolfe's chicken data (9 + 9 values):
// SAS/STAT's PROC NPAR1WAY HL (refclass B) prints "Location Shift (A − B)
// 0.5600" and asymptotic (Moses) 95 % limits −0.3700 and 1.1830, as
// reproduced by the PHUSE CAMIS comparison (psiaims.github.io/CAMIS,
// "Non-parametric point estimation" for SAS and for R, where R's
// wilcox.test(x, y, conf.int = TRUE) gives 0.5600562 and −0.3699774,
// 1.1829708 by its root-finding variant). Here C = 18 both ways: the
// normal formula gives ⌊40.5 − 1.96·√128.25⌋ = 18, and the exact
// distribution's qwilcox(0.025, 9, 9) is 18 too (P(U ≤ 17) = 0.01999,
// P(U ≤ 18) = 0.02515; 17 is the published two-sided 5 % critical value
// of U for 9 + 9), so both give the 18th and 64th of the 81 differences.
func TestShiftIntervalPublished(t *testing.T) {
	a := []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
	b := []float64{0.878, 0.647, 0.598, 2.050, 1.060, 1.290, 1.060, 3.140, 1.290}
	for _, exact := range []bool{true, false} {
		s, ok := shiftInterval(b, a, 0.05, exact)
		if !ok || !near(s.Estimate, 0.56, 1e-9) || !near(s.Lo, -0.37, 1e-9) || !near(s.Hi, 1.183, 1e-9) || s.Exact != exact {
			t.Errorf("exact=%v: %+v, %v; want 0.56 [−0.37, 1.183]", exact, s, ok)
		}
	}
	s, _ := ShiftInterval(b, a, 0.05)
	if !s.Exact || !near(s.Confidence, 1-2*0.019991772932949403, 1e-12) {
		t.Errorf("achieved confidence %v, want 1 − 2·P(U ≤ 17) = 0.96002", s.Confidence)
	}
	cdf := uCDF(9, 9)
	if !near(cdf[17], 0.019991772932949403, 1e-15) || !near(cdf[18], 0.025154257507198685, 1e-15) {
		t.Errorf("P(U ≤ 17), P(U ≤ 18) for 9+9 = %v, %v", cdf[17], cdf[18])
	}
}

// TestShiftIntervalTooFew: 2+2 samples cannot reach 95 % (P(U = 0) = 1/6
// each way), 4+4 can just (2/70).
func TestShiftIntervalTooFew(t *testing.T) {
	if _, ok := ShiftInterval([]float64{1, 2}, []float64{3, 4}, 0.05); ok {
		t.Error("2+2 gave an interval at α=0.05")
	}
	s, ok := ShiftInterval([]float64{1, 2, 3, 4}, []float64{11, 12, 13, 14}, 0.05)
	if !ok || s.Lo != 7 || s.Hi != 13 || s.Estimate != 10 || !near(s.Confidence, 1-2.0/70, 1e-12) {
		t.Errorf("4+4: %+v %v, want 10 [7, 13] at 97.1 %%", s, ok)
	}
	if _, ok := ShiftInterval(nil, []float64{1}, 0.05); ok {
		t.Error("empty side gave an interval")
	}
}

// TestPairDiffsKth: the order statistics found by bisection equal those
// of all differences listed and sorted, with ties and many samples.
func TestPairDiffsKth(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range [][2]int{{1, 1}, {3, 5}, {200, 300}, {700, 900}} {
		x, y := make([]float64, n[0]), make([]float64, n[1])
		for i := range x {
			x[i] = math.Round(r.NormFloat64()*20) / 4 // ties
		}
		for i := range y {
			y[i] = r.NormFloat64() + 1
		}
		var all []float64
		for _, yj := range y {
			for _, xi := range x {
				all = append(all, yj-xi)
			}
		}
		slices.Sort(all)
		slices.Sort(x)
		slices.Sort(y)
		d := pairDiffs{x: x, y: y}
		for _, k := range []int{1, len(all) / 3, (len(all) + 1) / 2, len(all)} {
			if k < 1 {
				continue
			}
			if got := d.kth(k); got != all[k-1] {
				t.Errorf("%v: kth(%d) = %v, want %v", n, k, got, all[k-1])
			}
		}
	}
}

package stats

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// The example in scipy.stats.mannwhitneyu's documentation: ages of male
// and female faculty.
var (
	scipyMales   = []float64{19, 22, 16, 29, 24}
	scipyFemales = []float64{20, 11, 17, 12}
)

func TestMannWhitneyUScipyExact(t *testing.T) {
	u, p := MannWhitneyU(scipyMales, scipyFemales)
	if u != 17 || !near(p, 0.1111111111111111, 1e-12) {
		t.Errorf("U, p = %v, %v; scipy says 17, 0.1111111111111111", u, p)
	}
	// Swapping the samples mirrors U and keeps the two-sided p.
	u2, p2 := MannWhitneyU(scipyFemales, scipyMales)
	if u2 != 3 || !near(p2, p, 1e-12) {
		t.Errorf("swapped: U, p = %v, %v; want 3, %v", u2, p2, p)
	}
}

func TestNormalApproximationScipy(t *testing.T) {
	// scipy: mannwhitneyu(males, females, method="asymptotic") → 0.11134688653314041.
	if p := normalP(17, 5, 4, nil); !near(p, 0.11134688653314041, 1e-12) {
		t.Errorf("asymptotic p = %v, scipy says 0.11134688653314041", p)
	}
}

func TestNormalApproximationWithTies(t *testing.T) {
	// ClickHouse's mannWhitneyUTest test (two-sided, continuity correction),
	// whose samples are full of ties: p = 0.5426959774289482.
	left := []float64{310, 195, 530, 155, 530, 245, 385, 450, 465, 545, 170, 180, 125, 180, 230, 75, 430, 480, 495, 295}
	right := []float64{116, 171, 176, 421, 111, 326, 481, 111, 346, 441, 261, 411, 206, 521, 456, 446, 296, 51, 426, 261}
	ranks2, ties := doubledRanks(left, right)
	r1 := 0
	for _, r := range ranks2[:len(left)] {
		r1 += r
	}
	u := float64(r1)/2 - float64(len(left)*(len(left)+1))/2
	if u != 223 {
		t.Errorf("U = %v, want 223", u)
	}
	if p := normalP(u, len(left), len(right), ties); !near(p, 0.5426959774289482, 1e-12) {
		t.Errorf("p = %v, want 0.5426959774289482", p)
	}
	// The exact p on the same data must agree with the approximation to
	// the accuracy the approximation has at n = 20+20.
	if p := exactP(ranks2, len(left), r1); !near(p, 0.5427, 0.01) {
		t.Errorf("exact p = %v, far from the approximation 0.5427", p)
	}
	// 40 samples are past exactLimit: MannWhitneyU approximates.
	if _, p := MannWhitneyU(left, right); p != normalP(u, len(left), len(right), ties) {
		t.Errorf("MannWhitneyU p = %v, want the normal approximation", p)
	}
}

func TestMannWhitneyURExample(t *testing.T) {
	// R's ?wilcox.test example: W = 35, one-sided p = 0.1272, so two-sided 0.2544.
	x := []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46}
	y := []float64{1.15, 0.88, 0.90, 0.74, 1.21}
	u, p := MannWhitneyU(x, y)
	if u != 35 || !near(p, 0.2544, 5e-5) {
		t.Errorf("U, p = %v, %v; R says 35, 0.2544", u, p)
	}
}

func TestMannWhitneyUSeparated(t *testing.T) {
	// Complete separation with 4+4: only 2 of the C(8,4) = 70 orderings are
	// as extreme, so p = 2/70.
	_, p := MannWhitneyU([]float64{1, 2, 3, 4}, []float64{5, 6, 7, 8})
	if !near(p, 2.0/70, 1e-12) {
		t.Errorf("p = %v, want %v", p, 2.0/70)
	}
	_, p = MannWhitneyU([]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10})
	if !near(p, 2.0/252, 1e-12) {
		t.Errorf("5+5 p = %v, want %v", p, 2.0/252)
	}
}

// bruteForceP enumerates every assignment of the pooled samples to x.
func bruteForceP(x, y []float64) float64 {
	ranks2, _ := doubledRanks(x, y)
	n1, n := len(x), len(x)+len(y)
	obs := 0
	for _, r := range ranks2[:n1] {
		obs += r
	}
	var total, lo, hi float64
	for mask := 0; mask < 1<<n; mask++ {
		if popcount(mask) != n1 {
			continue
		}
		s := 0
		for i := 0; i < n; i++ {
			if mask&(1<<i) != 0 {
				s += ranks2[i]
			}
		}
		total++
		if s <= obs {
			lo++
		}
		if s >= obs {
			hi++
		}
	}
	return min(1, 2*min(lo, hi)/total)
}

func popcount(m int) int {
	n := 0
	for ; m != 0; m &= m - 1 {
		n++
	}
	return n
}

func TestExactPWithTiesMatchesEnumeration(t *testing.T) {
	cases := [][2][]float64{
		{{1, 2, 2, 3}, {2, 3, 4, 5}},
		{{35, 35, 35, 36}, {35, 36, 36, 36, 37}},
		{{5, 5, 5, 5}, {5, 5, 5, 5}},
		{{1.5, 2.5, 2.5, 2.5, 9}, {2.5, 3, 3, 10, 11, 12}},
		{{7}, {7, 8, 9}},
	}
	for _, c := range cases {
		_, got := MannWhitneyU(c[0], c[1])
		if want := bruteForceP(c[0], c[1]); !near(got, want, 1e-12) {
			t.Errorf("%v vs %v: p = %v, enumeration says %v", c[0], c[1], got, want)
		}
	}
}

func TestMinSamples(t *testing.T) {
	for alpha, want := range map[float64]int{0.05: 4, 0.01: 5, 0.2: 3, 0.001: 7} {
		if got := MinSamples(alpha); got != want {
			t.Errorf("MinSamples(%v) = %d, want %d", alpha, got, want)
		}
	}
}

func TestMedian(t *testing.T) {
	if m := Median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("Median = %v, want 2.5", m)
	}
	type dur int64
	if m := Median([]dur{7, 1, 3}); m != 3 {
		t.Errorf("Median = %v, want 3", m)
	}
	if m := Median[float64](nil); m != 0 {
		t.Errorf("Median(nil) = %v, want 0", m)
	}
}

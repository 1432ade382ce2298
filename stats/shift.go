package stats

import (
	"math"
	"slices"
)

// Shift is the Hodges–Lehmann estimate of the location shift from a
// sample x to a sample y (how much y's values are larger) with its
// distribution-free confidence interval: the interval that inverts the
// two-sided Mann–Whitney test, also known as Moses' interval (Hollander &
// Wolfe, Nonparametric Statistical Methods, §4.3; R's
// wilcox.test(y, x, conf.int = TRUE)).
type Shift struct {
	// Estimate is the median of the n1·n2 differences y[j] − x[i] (the
	// mean of the two middle ones for an even count).
	Estimate float64
	// Lo and Hi are the C-th smallest and C-th largest differences, with
	// C from the Mann–Whitney distribution of U at α/2: exact below
	// ExactShiftLimit samples a side, else the normal approximation.
	Lo, Hi float64
	// Confidence is the interval's coverage: exact, the achieved level
	// 1 − 2·P(U ≤ C−1) (at least 1 − α); approximate, the nominal 1 − α.
	Confidence float64
	// Exact tells which distribution gave C.
	Exact bool
}

// ExactShiftLimit is the sample count a side below which ShiftInterval
// takes C from the exact distribution of U (R's wilcox.test uses the same
// bound); at and above it the normal approximation.
const ExactShiftLimit = 50

// ShiftInterval returns the Hodges–Lehmann shift from x to y and its
// 1 − alpha interval, and false when either is empty or the samples are
// too few for any interval to reach that confidence (both extreme
// orderings together already more likely than alpha); the estimate and
// Exact are set then too, the interval and Confidence left 0.
//
// For large samples C is ⌊n1·n2/2 − z(α/2)·√(n1·n2·(n1+n2+1)/12)⌋
// (Hollander & Wolfe; SAS PROC NPAR1WAY's asymptotic "Moses" limits);
// for small ones the smallest c with P(U ≤ c) ≥ α/2 (R's qwilcox). The
// differences' order statistics are found without forming all n1·n2 of
// them, so thousands of samples a side cost milliseconds.
func ShiftInterval(x, y []float64, alpha float64) (Shift, bool) {
	return shiftInterval(x, y, alpha, len(x) < ExactShiftLimit && len(y) < ExactShiftLimit)
}

// shiftInterval is ShiftInterval with the choice of C's distribution
// given.
func shiftInterval(x, y []float64, alpha float64, exact bool) (Shift, bool) {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return Shift{}, false
	}
	xs, ys := slices.Clone(x), slices.Clone(y)
	slices.Sort(xs)
	slices.Sort(ys)
	d := pairDiffs{x: xs, y: ys}
	mn := n1 * n2
	s := Shift{Estimate: d.kth((mn + 1) / 2)}
	if mn%2 == 0 {
		s.Estimate = (s.Estimate + d.kth(mn/2+1)) / 2
	}
	var c int
	s.Exact = exact
	if exact {
		cdf := uCDF(n1, n2)
		for c < len(cdf) && cdf[c] < alpha/2 {
			c++
		}
		// c is the smallest value with P(U ≤ c) ≥ α/2; the interval
		// [D(c), D(mn+1−c)] misses with probability 2·P(U ≤ c−1).
		if c == 0 {
			return s, false
		}
		s.Confidence = 1 - 2*cdf[c-1]
	} else {
		z := math.Sqrt2 * math.Erfinv(1-alpha)
		c = int(math.Floor(float64(mn)/2 - z*math.Sqrt(float64(mn)*float64(n1+n2+1)/12)))
		if c < 1 {
			return s, false
		}
		s.Confidence = 1 - alpha
	}
	s.Lo, s.Hi = d.kth(c), d.kth(mn+1-c)
	return s, true
}

// uCDF returns P(U ≤ u) for u = 0 … n1·n2 under the null hypothesis
// without ties: the share of the C(n1+n2, n1) ways of choosing x's ranks
// whose rank sum is n1(n1+1)/2 + u.
func uCDF(n1, n2 int) []float64 {
	n := n1 + n2
	maxSum := n * (n + 1) / 2
	// ways[k][s]: subsets of size k of the ranks seen so far with sum s.
	ways := make([][]float64, n1+1)
	for k := range ways {
		ways[k] = make([]float64, maxSum+1)
	}
	ways[0][0] = 1
	for r := 1; r <= n; r++ {
		for k := min(r, n1); k >= 1; k-- {
			prev, cur := ways[k-1], ways[k]
			for s := r * (r + 1) / 2; s >= r; s-- {
				cur[s] += prev[s-r]
			}
		}
	}
	base := n1 * (n1 + 1) / 2
	cdf := make([]float64, n1*n2+1)
	total := 0.0
	for u := range cdf {
		total += ways[n1][base+u]
		cdf[u] = total
	}
	for u := range cdf {
		cdf[u] /= total
	}
	return cdf
}

// pairDiffs stands for the n1·n2 differences y[j] − x[i] of two sorted
// samples without storing them.
type pairDiffs struct{ x, y []float64 }

// countLE returns how many differences are ≤ v. For a fixed j the
// difference falls as i grows, so those ≤ v are a suffix of x whose start
// only moves right as j grows.
func (d pairDiffs) countLE(v float64) int {
	n, i := 0, 0
	for _, yj := range d.y {
		for i < len(d.x) && yj-d.x[i] > v {
			i++
		}
		n += len(d.x) - i
	}
	return n
}

// kth returns the k-th smallest difference (1-based).
func (d pairDiffs) kth(k int) float64 {
	lo := math.Nextafter(d.y[0]-d.x[len(d.x)-1], math.Inf(-1))
	hi := d.y[len(d.y)-1] - d.x[0]
	return Kth(k, lo, hi, max(4096, 4*(len(d.x)+len(d.y))), d.countLE, d.listed)
}

// listed returns the differences in (lo, hi]: for each y[j], those of the
// x[i] between the first whose difference is ≤ hi and the first whose
// difference is ≤ lo.
func (d pairDiffs) listed(lo, hi float64) []float64 {
	var in []float64
	for _, yj := range d.y {
		from, _ := slices.BinarySearchFunc(d.x, hi, func(xi, v float64) int { return cmpDiff(yj-xi, v) })
		to, _ := slices.BinarySearchFunc(d.x, lo, func(xi, v float64) int { return cmpDiff(yj-xi, v) })
		for _, xi := range d.x[from:to] {
			in = append(in, yj-xi)
		}
	}
	return in
}

// cmpDiff orders x values for the binary search of listed: a difference
// above v comes first (x ascending, so differences descend), one at or
// below v after.
func cmpDiff(diff, v float64) int {
	if diff > v {
		return -1
	}
	return 1
}

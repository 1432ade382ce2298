package diff

import (
	"math"
	"slices"

	"github.com/tracelens/tracelens/stats"
)

// crossings stands for the points x = b/n − 1 (b of base, n of new, both
// relative to their medians) at which MinDetectablePct's U statistic
// changes, without listing the len(base)·len(new) of them: diff of two
// long traces has thousands of steps a side, and listing (then sorting)
// every pair took most of diff's time. Ratios are computed as b/n, the
// same expression the list used, so each point is the same float.
//
// Each side is kept as its distinct values and how often each occurs:
// step times that repeat (a trace of a few recurring step shapes) make
// millions of equal ratios, which cost a bisection on the value down to
// adjacent floats when counted one by one, and one entry each here.
type crossings struct {
	b, n   []float64 // distinct positive values, ascending
	wb, wn []int     // how many samples hold each of them
	// cb[j] is how many positive base samples are below b[j] (wb's
	// prefix sums), so a count adds one product per new value.
	cb     []int
	nb, nn int // positive samples a side (with repeats)
	// below is how many finite ratios are under 1 (x < 0); inf how many
	// are +Inf (n = 0 < b), the last points of the rising side.
	below, finite, inf int
}

// newCrossings groups rb's and rn's positive values (sorting copies when
// they are not ascending already). A zero base value gives x = −1, no
// crossing; a zero new value gives +Inf against a positive base value.
func newCrossings(rb, rn []float64) *crossings {
	c := &crossings{}
	var zeros int
	c.b, c.wb, _ = distinctPositive(rb)
	c.n, c.wn, zeros = distinctPositive(rn)
	c.cb = make([]int, len(c.b)+1)
	for j, w := range c.wb {
		c.cb[j+1] = c.cb[j] + w
	}
	c.nb = c.cb[len(c.b)]
	for _, w := range c.wn {
		c.nn += w
	}
	c.inf = zeros * c.nb
	c.finite = c.nb * c.nn
	if c.finite > 0 {
		c.below = c.countLT(1)
	}
	return c
}

// distinctPositive returns s's distinct positive values ascending, how
// many times each occurs, and how many values are zero.
func distinctPositive(s []float64) (vals []float64, counts []int, zeros int) {
	if !slices.IsSorted(s) {
		s = slices.Clone(s)
		slices.Sort(s)
	}
	vals, counts = make([]float64, 0, len(s)), make([]int, 0, len(s))
	for i, v := range s {
		switch {
		case v == 0:
			zeros++
		case !(v > 0):
		case i > 0 && v == s[i-1]:
			counts[len(counts)-1]++
		default:
			vals, counts = append(vals, v), append(counts, 1)
		}
	}
	return vals, counts, zeros
}

// up is the number of crossings at x ≥ 0, down at −1 < x < 0.
func (c *crossings) up() int   { return c.finite - c.below + c.inf }
func (c *crossings) down() int { return c.below }

// upAt is the i-th smallest crossing at x ≥ 0 (0-based).
func (c *crossings) upAt(i int) float64 {
	if i >= c.finite-c.below {
		return math.Inf(1)
	}
	return c.kth(c.below+i+1) - 1
}

// downAt is the i-th smallest |x| of the crossings at x < 0 (0-based):
// the ratios under 1, largest first.
func (c *crossings) downAt(i int) float64 { return -(c.kth(c.below-i) - 1) }

// past is the first index from j on whose b gives a ratio to n above v:
// for n ascending, and v fixed, the base values at or under v form a
// prefix of b that only grows, so a walk over all n moves j once across b.
func (c *crossings) past(j int, n, v float64) int {
	for j < len(c.b) && c.b[j]/n <= v {
		j++
	}
	return j
}

// countLE is how many ratios b/n are ≤ v, and in how many distinct
// (b, n) pairs: one merge-like walk over both sides.
func (c *crossings) countLE(v float64) (count, pairs int) {
	j := 0
	for i, n := range c.n {
		j = c.past(j, n, v)
		count += c.cb[j] * c.wn[i]
		pairs += j
	}
	return count, pairs
}

// countLT is how many ratios are < v: those ≤ the float below v.
func (c *crossings) countLT(v float64) int {
	n, _ := c.countLE(math.Nextafter(v, math.Inf(-1)))
	return n
}

// kth is the k-th smallest finite ratio (1-based).
func (c *crossings) kth(k int) float64 {
	lo := math.Nextafter(c.b[0]/c.n[len(c.n)-1], math.Inf(-1))
	hi := c.b[len(c.b)-1] / c.n[0]
	// A count walks both sides once, and listing the pairs left costs
	// about that much plus sorting them, so bisection goes on until the
	// pairs left are a fraction of the two sides.
	return stats.KthWeighted(k, lo, hi, max(64, (len(c.b)+len(c.n))/4), c.countLE, c.listed)
}

// listed is the distinct pairs' ratios in (lo, hi], each with how many
// sample pairs give it: for each n, the b whose ratio is in it are the run
// between the walk at lo and the walk at hi.
func (c *crossings) listed(lo, hi float64) []stats.Weighted {
	var in []stats.Weighted
	from, to := 0, 0
	for i, n := range c.n {
		from, to = c.past(from, n, lo), c.past(to, n, hi)
		for j := from; j < to; j++ {
			in = append(in, stats.Weighted{V: c.b[j] / n, N: c.wb[j] * c.wn[i]})
		}
	}
	return in
}

// minDetectableNormal is MinDetectablePct under the normal approximation,
// where the p-value is a function of U and the tied groups alone. Just
// past a crossing no base value ties a scaled new one (zeros aside: a
// zero of either side ties every zero of the other at every scale), so
// the groups are fixed, and U is fixed by how many ratios lie below the
// scale: the search runs over that count, with one selection of a ratio
// at the end, instead of ranking both samples at every probe (diff of two
// 2,000-step traces spent most of its time there). It reports false for
// negative values, which the crossings do not model.
func (c *crossings) minDetectableNormal(rb, rn []float64, alpha float64) (float64, bool) {
	ties, zb, zn, ok := sampleTies(rb, rn)
	if !ok {
		return 0, false
	}
	nb, nn := len(rb), len(rn)
	nm, zz := float64(nb)*float64(nn), float64(zb)*float64(zn)
	detect := func(u float64) bool { return stats.NormalP(u, nb, nn, ties) < alpha }
	// first is the smallest count in [lo, hi] for which u(count) is
	// detected, assuming (as the scan does) that detection, once reached,
	// holds for larger counts; -1 when hi is not detected.
	first := func(lo, hi int, u func(int) float64) int {
		if lo > hi || !detect(u(hi)) {
			return -1
		}
		for lo < hi {
			if mid := (lo + hi) / 2; detect(u(mid)) {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		return hi
	}
	best := math.Inf(1)
	// Growing: U counts base values above scaled new ones; past the
	// L-th smallest ratio L finite pairs are below, and so is every zero
	// base against a positive new value.
	up := func(l int) float64 { return nm - float64(l) - float64(zb)*float64(c.nn) - zz/2 }
	if l := first(c.below+1, c.finite, up); l > 0 {
		best = min(best, (c.kth(l)-1)*100)
	}
	// Shrinking: U counts the G finite ratios above the scale and every
	// positive base against a zero new value; the G-th largest ratio is
	// the (finite−G+1)-th smallest.
	down := func(g int) float64 { return float64(g) + float64(zn)*float64(c.nb) + zz/2 }
	if g := first(c.finite-c.below+1, c.finite, down); g > 0 {
		best = min(best, (1-c.kth(c.finite-g+1))*100)
	}
	return best, true
}

// sampleTies returns the sizes of the tied groups just past a crossing
// (equal positive values within each sample; all zeros of both samples
// together) and each sample's zero count; false if a value is negative.
func sampleTies(rb, rn []float64) (ties []int, zb, zn int, ok bool) {
	ties, zb, ok = appendTies(nil, rb)
	if !ok {
		return nil, 0, 0, false
	}
	ties, zn, ok = appendTies(ties, rn)
	if !ok {
		return nil, 0, 0, false
	}
	if zb+zn > 1 {
		ties = append(ties, zb+zn)
	}
	return ties, zb, zn, true
}

// appendTies appends the sizes of s's groups of equal positive values to
// ties and counts its zeros; false if a value is negative. It sorts a
// copy only when s is not ascending (MinDetectablePct's are: sorted
// samples over a positive median).
func appendTies(ties []int, s []float64) ([]int, int, bool) {
	v := s
	if !slices.IsSorted(v) {
		v = slices.Clone(s)
		slices.Sort(v)
	}
	if len(v) > 0 && v[0] < 0 {
		return nil, 0, false
	}
	zeros := 0
	for lo := 0; lo < len(v); {
		hi := lo + 1
		for hi < len(v) && v[hi] == v[lo] {
			hi++
		}
		if v[lo] == 0 {
			zeros = hi - lo
		} else if hi-lo > 1 {
			ties = append(ties, hi-lo)
		}
		lo = hi
	}
	return ties, zeros, true
}

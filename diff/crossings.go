package diff

import (
	"math"
	"slices"
	"sort"

	"github.com/tracelens/tracelens/stats"
)

// crossings stands for the points x = b/n − 1 (b of base, n of new, both
// relative to their medians) at which MinDetectablePct's U statistic
// changes, without listing the len(base)·len(new) of them: diff of two
// long traces has thousands of steps a side, and listing (then sorting)
// every pair took most of diff's time. Ratios are computed as b/n, the
// same expression the list used, so each point is the same float.
type crossings struct {
	b, n []float64 // positive values, ascending
	// below is how many finite ratios are under 1 (x < 0); inf how many
	// are +Inf (n = 0 < b), the last points of the rising side.
	below, finite, inf int
}

// newCrossings sorts copies of rb and rn. A zero base value gives x = −1,
// no crossing; a zero new value gives +Inf against a positive base value.
func newCrossings(rb, rn []float64) *crossings {
	c := &crossings{}
	zeros := 0
	for _, v := range rb {
		if v > 0 {
			c.b = append(c.b, v)
		}
	}
	for _, v := range rn {
		if v > 0 {
			c.n = append(c.n, v)
		} else if v == 0 {
			zeros++
		}
	}
	slices.Sort(c.b)
	slices.Sort(c.n)
	c.inf = zeros * len(c.b)
	c.finite = len(c.b) * len(c.n)
	if c.finite > 0 {
		c.below = c.countLT(1)
	}
	return c
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

// countLE is how many ratios b/n are ≤ v: for each n (ascending) those
// b with b/n ≤ v are a prefix of b that only grows as n grows.
func (c *crossings) countLE(v float64) int {
	k, j := 0, 0
	for _, n := range c.n {
		for j < len(c.b) && c.b[j]/n <= v {
			j++
		}
		k += j
	}
	return k
}

// countLT is how many ratios are < v: those ≤ the float below v.
func (c *crossings) countLT(v float64) int { return c.countLE(math.Nextafter(v, math.Inf(-1))) }

// kth is the k-th smallest finite ratio (1-based).
func (c *crossings) kth(k int) float64 {
	lo := math.Nextafter(c.b[0]/c.n[len(c.n)-1], math.Inf(-1))
	hi := c.b[len(c.b)-1] / c.n[0]
	return stats.Kth(k, lo, hi, max(4096, 4*(len(c.b)+len(c.n))), c.countLE, c.listed)
}

// listed is the ratios in (lo, hi]: for each n, the b whose ratio is in it
// are a run of b, found by binary search.
func (c *crossings) listed(lo, hi float64) []float64 {
	var in []float64
	for _, n := range c.n {
		from := sort.Search(len(c.b), func(j int) bool { return c.b[j]/n > lo })
		to := sort.Search(len(c.b), func(j int) bool { return c.b[j]/n > hi })
		for _, b := range c.b[from:to] {
			in = append(in, b/n)
		}
	}
	return in
}

package diff

import (
	"fmt"
	"math"
	"strings"

	"github.com/tracelens/tracelens/stats"
)

// Separated reports whether the two sides' samples do not overlap at all:
// every new sample above every base sample, or every one below. With too
// few steps for the U test to reach α (2+2 compared steps: its smallest p
// is 0.33) a change can still be this clear, and a row that only said
// "untested" would hide it.
func (d *Delta) Separated() bool {
	b, n := d.Base.Values, d.New.Values
	if len(b) == 0 || len(n) == 0 {
		return false
	}
	return n[0] > b[len(b)-1] || n[len(n)-1] < b[0]
}

// MinDetectablePct is the smallest change of the median, in percent, that
// the U test at alpha could call significant given these samples' spread:
// each side's samples relative to its own median, the new side's scaled
// by 1+x: the smallest |x|, in either direction, past which the test's p
// is below alpha. It is +Inf when the sample counts
// cannot reach alpha at any size (fewer than MinSamples per side) and
// NaN when a side has no samples or a zero median.
func MinDetectablePct(d Delta, alpha float64) float64 {
	b, n := d.Base.Values, d.New.Values
	if len(b) == 0 || len(n) == 0 || d.Base.Median == 0 || d.New.Median == 0 {
		return math.NaN()
	}
	if stats.MinP(len(b), len(n)) >= alpha {
		return math.Inf(1)
	}
	rb := relative(b, d.Base.Median)
	rn := relative(n, d.New.Median)
	cr := newCrossings(rb, rn)
	if !stats.Exact(len(rb), len(rn)) {
		if v, ok := cr.minDetectableNormal(rb, rn, alpha); ok {
			return v
		}
	}
	return cr.minDetectableScan(rb, rn, alpha)
}

// minDetectableScan is MinDetectablePct by running the U test at
// crossings: the exact small-sample p-values are not a function of U
// alone once values tie, so they are searched this way.
func (cr *crossings) minDetectableScan(rb, rn []float64, alpha float64) float64 {
	detect := func(x float64) bool {
		s := make([]float64, len(rn))
		for i, v := range rn {
			s[i] = v * (1 + x)
		}
		_, p := stats.MannWhitneyU(rb, s)
		return p < alpha
	}
	// The U statistic changes only where a scaled new sample crosses a
	// base sample: at x = b/n − 1 for each pair. Just past the crossings,
	// in each direction, the test's p falls as x grows; the answer is the
	// first crossing past which it is below alpha (binary search over the
	// crossings in order, each selected without listing them all).
	best := math.Inf(1)
	for _, c := range []struct {
		sign float64
		n    int
		at   func(int) float64
	}{{1, cr.up(), cr.upAt}, {-1, cr.down(), cr.downAt}} {
		past := func(i int) bool { return detect(c.sign*c.at(i)*(1+1e-9) + c.sign*1e-12) }
		if c.n == 0 || !past(c.n-1) {
			continue
		}
		lo, hi := 0, c.n-1 // past(hi) holds
		for lo < hi {
			mid := (lo + hi) / 2
			if past(mid) {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		best = min(best, c.at(hi)*100)
	}
	return best
}

// relative is each value over median.
func relative(v []float64, median float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x / median
	}
	return out
}

// detectableNote says how large a step-time change these steps could show
// (MinDetectablePct), so "~" reads as "no change above x %", not "no
// change"; "" when the sides have no samples.
func detectableNote(d Delta, alpha float64) string {
	nb, nn := len(d.Base.Values), len(d.New.Values)
	switch m := d.MinDetectablePct; {
	case math.IsNaN(m):
		return ""
	case math.IsInf(m, 1):
		return fmt.Sprintf("with %d+%d steps no step-period change is detectable at any size (the U test needs ≥ %d per side)", nb, nn, stats.MinSamples(alpha))
	default:
		return fmt.Sprintf("with %d+%d steps at these spreads, the smallest step-period change the U test can detect is about %s", nb, nn, strings.TrimPrefix(FormatPct(m), "+"))
	}
}

package diff

import (
	"fmt"
	"math"
	"slices"

	"github.com/tracelens/tracelens/analyze"
)

// Summary describes one side's samples the way benchstat prints them: a
// median and a spread around it.
type Summary struct {
	// Values are the samples, sorted ascending.
	Values []float64
	// Median is the middle sample (the midpoint of the two middle ones for
	// an even count); robust to the odd slow step that means would chase.
	Median float64
	// Spread is the largest relative distance of any sample from the
	// median (0.04 = ±4%), as the original benchstat printed it. It needs
	// no minimum sample count, unlike a confidence interval, which matters
	// because a trace often holds only four or five steps.
	Spread float64
}

// Summarize sorts a copy of values and returns their median and spread.
func Summarize(values []float64) Summary {
	v := slices.Clone(values)
	slices.Sort(v)
	s := Summary{Values: v}
	if len(v) == 0 {
		return s
	}
	// The project's one median: analyze's "the step" is the same statistic.
	s.Median = analyze.Median(v)
	if s.Median != 0 {
		for _, x := range v {
			s.Spread = max(s.Spread, math.Abs(x-s.Median)/math.Abs(s.Median))
		}
	}
	return s
}

// Delta is the statistical comparison of one metric between two runs.
type Delta struct {
	Base, New Summary
	// Pct is the change of the median in percent ((new/base − 1) × 100).
	// It is NaN when the base median is 0 and the new one is not: an
	// added kernel has no percentage change.
	Pct float64
	// P is the two-sided p-value of the Mann–Whitney U test (1 when either
	// side has no samples).
	P float64
	// Significant is true when P < α and both sides have enough samples
	// for the test to be able to reach α at all.
	Significant bool
	// Note explains why a difference cannot be claimed ("need ≥ 4 samples
	// per side …", "all samples equal"); empty otherwise.
	Note string
	// MinDetectablePct is MinDetectablePct of these samples at the α they
	// were tested at: +Inf with too few samples, NaN with none.
	MinDetectablePct float64
}

// CompareSamples summarises base and new, tests whether they differ at
// significance level alpha, and explains when they cannot be tested.
func CompareSamples(base, new []float64, alpha float64) Delta {
	d := Delta{Base: Summarize(base), New: Summarize(new), P: 1}
	d.MinDetectablePct = MinDetectablePct(d, alpha)
	switch {
	case d.Base.Median == d.New.Median:
		d.Pct = 0
	case d.Base.Median == 0:
		d.Pct = math.NaN()
	default:
		d.Pct = (d.New.Median/d.Base.Median - 1) * 100
	}
	n1, n2 := len(base), len(new)
	if n1 == 0 || n2 == 0 {
		d.Note = "no samples on one side"
		return d
	}
	_, d.P = MannWhitneyU(base, new)
	if minP(n1, n2) >= alpha {
		d.Note = fmt.Sprintf("need ≥ %d samples per side to detect a difference at α=%g", MinSamples(alpha), alpha)
		if d.Separated() {
			d.Note += "; the ranges do not overlap (every new sample on one side of every base sample), an untested but consistent change"
		}
		return d
	}
	if allEqual(d.Base.Values, d.New.Values) {
		d.Note = "all samples equal"
		return d
	}
	d.Significant = d.P < alpha
	return d
}

// Testable reports whether the U test could judge this change: both sides
// have enough samples to reach α and they are not all equal. A Delta that
// is not Testable and not Significant says nothing either way.
func (d *Delta) Testable() bool {
	return d.Note == "" || d.Note == "all samples equal"
}

func allEqual(a, b []float64) bool {
	for _, x := range a {
		if x != a[0] {
			return false
		}
	}
	for _, x := range b {
		if x != a[0] {
			return false
		}
	}
	return true
}

// minP is the smallest two-sided p-value the U test can give for sample
// sizes n1 and n2: both extreme orderings, out of C(n1+n2, n1).
func minP(n1, n2 int) float64 {
	return min(1, 2/binomial(n1+n2, n1))
}

// MinSamples returns the smallest per-side sample count at which the U test
// can reach significance level alpha with equal sample sizes (4 for the
// usual α = 0.05): below it "no difference" means "cannot tell".
func MinSamples(alpha float64) int {
	n := 1
	for minP(n, n) >= alpha && n < 1000 {
		n++
	}
	return n
}

func binomial(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

// exactLimit is the largest total sample count for which MannWhitneyU
// enumerates the exact distribution; above it the normal approximation is
// accurate to well under the precision anyone reads a p-value at.
const exactLimit = 30

// MannWhitneyU returns the U statistic of x (the number of pairs in which
// an x sample exceeds a y sample, ties counting one half) and the two-sided
// p-value of the Mann–Whitney U test that x and y come from the same
// distribution.
//
// For up to exactLimit samples in all the p-value is exact: the
// permutation distribution of x's rank sum, with tied values given their
// mid-rank, counted by dynamic programming, so ties are handled exactly
// too. Larger samples use the normal approximation with tie and continuity
// corrections (scipy.stats.mannwhitneyu's "asymptotic" method).
func MannWhitneyU(x, y []float64) (u, p float64) {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return 0, 1
	}
	ranks2, ties := doubledRanks(x, y)
	r1 := 0 // twice x's rank sum
	for _, r := range ranks2[:n1] {
		r1 += r
	}
	u = float64(r1)/2 - float64(n1*(n1+1))/2
	if n1+n2 <= exactLimit {
		return u, exactP(ranks2, n1, r1)
	}
	return u, normalP(u, n1, n2, ties)
}

// doubledRanks ranks x followed by y together, giving tied values their
// mid-rank, and returns twice each rank (so mid-ranks stay integers) and
// the sizes of the groups of tied values.
func doubledRanks(x, y []float64) (ranks2 []int, ties []int) {
	type item struct {
		v float64
		i int
	}
	all := make([]item, 0, len(x)+len(y))
	for i, v := range x {
		all = append(all, item{v, i})
	}
	for i, v := range y {
		all = append(all, item{v, len(x) + i})
	}
	slices.SortFunc(all, func(a, b item) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	ranks2 = make([]int, len(all))
	for lo := 0; lo < len(all); {
		hi := lo + 1
		for hi < len(all) && all[hi].v == all[lo].v {
			hi++
		}
		// Ranks lo+1 … hi share their mean (lo+1+hi)/2; doubled: lo+1+hi.
		for k := lo; k < hi; k++ {
			ranks2[all[k].i] = lo + 1 + hi
		}
		if hi-lo > 1 {
			ties = append(ties, hi-lo)
		}
		lo = hi
	}
	return ranks2, ties
}

// exactP counts, over every way of choosing n1 of the pooled samples, how
// many give a (doubled) rank sum at most and at least the observed r1, and
// returns the two-sided p-value 2·min(P(R ≤ r1), P(R ≥ r1)), capped at 1.
func exactP(ranks2 []int, n1, r1 int) float64 {
	maxSum := 0
	for _, r := range ranks2 {
		maxSum += r
	}
	// ways[k][s]: subsets of size k whose doubled rank sum is s. Counts
	// reach C(40,20) ≈ 1.4e11, exact in a float64.
	ways := make([][]float64, n1+1)
	for k := range ways {
		ways[k] = make([]float64, maxSum+1)
	}
	ways[0][0] = 1
	n, seen := len(ranks2), 0 // seen: rank sum of the items processed so far
	for i, r := range ranks2 {
		seen += r
		// Subsets that could still reach size n1 with the n−i−1 items left.
		lowest := max(1, n1-(n-i-1))
		for k := min(i+1, n1); k >= lowest; k-- {
			prev, cur := ways[k-1], ways[k]
			for s := seen; s >= r; s-- {
				cur[s] += prev[s-r]
			}
		}
	}
	var total, lo, hi float64
	for s, c := range ways[n1] {
		total += c
		if s <= r1 {
			lo += c
		}
		if s >= r1 {
			hi += c
		}
	}
	return min(1, 2*min(lo, hi)/total)
}

// normalP is the two-sided p-value of U under the normal approximation,
// with the variance reduced for ties and a continuity correction of ½.
func normalP(u float64, n1, n2 int, ties []int) float64 {
	n := float64(n1 + n2)
	mu := float64(n1*n2) / 2
	tieSum := 0.0
	for _, t := range ties {
		tf := float64(t)
		tieSum += tf*tf*tf - tf
	}
	variance := float64(n1*n2) / 12 * ((n + 1) - tieSum/(n*(n-1)))
	if variance <= 0 {
		return 1 // every sample equal: no evidence of any difference
	}
	z := (math.Abs(u-mu) - 0.5) / math.Sqrt(variance)
	if z < 0 {
		return 1
	}
	return min(1, math.Erfc(z/math.Sqrt2))
}

// Package stats holds the statistics tracelens's comparisons share: the
// median, and the Mann–Whitney U test with its exact small-sample p-values,
// used by diff (is a metric's change significant) and by distributed (does
// a range differ between a straggler and the other ranks). It depends only
// on the standard library.
package stats

import (
	"math"
	"slices"
)

// Median returns the median of v, which it sorts in place (the midpoint of
// the two middle values for an even count; for integer types that midpoint
// is rounded toward zero); 0 for none. It is the project's one median:
// analyze's "the step" and diff's summaries use it.
func Median[T ~int64 | ~float64](v []T) T {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	m := len(v) / 2
	if len(v)%2 == 1 {
		return v[m]
	}
	return (v[m-1] + v[m]) / 2
}

// MinP is the smallest two-sided p-value the U test can give for sample
// sizes n1 and n2: both extreme orderings, out of C(n1+n2, n1).
func MinP(n1, n2 int) float64 {
	return min(1, 2/binomial(n1+n2, n1))
}

// MinSamples returns the smallest per-side sample count at which the U test
// can reach significance level alpha with equal sample sizes (4 for the
// usual α = 0.05): below it "no difference" means "cannot tell".
func MinSamples(alpha float64) int {
	n := 1
	for MinP(n, n) >= alpha && n < 1000 {
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
	return uTest(ranks2, ties, n1, n2)
}

// MannWhitneyUSorted is MannWhitneyU of x and y already sorted ascending
// (without NaN), bit for bit: the pooled ranks come from one merge of the
// two instead of sorting them together, which on thousands of steps a
// side cost more than the rest of a diff row's statistics. The tied
// groups come in the same ascending order, so the normal
// approximation's tie sum adds the same terms in the same order; the
// exact p-value counts subsets with integers far below 2⁵³, so the order
// the ranks come in does not change it.
func MannWhitneyUSorted(x, y []float64) (u, p float64) {
	if len(x) == 0 || len(y) == 0 {
		return 0, 1
	}
	ranks2, ties := mergedRanks(x, y)
	return uTest(ranks2, ties, len(x), len(y))
}

// uTest is MannWhitneyU from the doubled ranks (x's first) and the tied
// groups' sizes.
func uTest(ranks2, ties []int, n1, n2 int) (u, p float64) {
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

// mergedRanks is doubledRanks of two ascending samples: walking both at
// once, each group of equal values is the run of it in x and the run in y.
func mergedRanks(x, y []float64) (ranks2 []int, ties []int) {
	n1 := len(x)
	ranks2 = make([]int, n1+len(y))
	i, j := 0, 0
	for i < n1 || j < len(y) {
		var v float64
		switch {
		case j == len(y) || (i < n1 && x[i] < y[j]):
			v = x[i]
		default:
			v = y[j]
		}
		lo, ei, ej := i+j, i, j
		for ei < n1 && x[ei] == v {
			ei++
		}
		for ej < len(y) && y[ej] == v {
			ej++
		}
		// As in doubledRanks: ranks lo+1 … hi share lo+1+hi, doubled.
		r := lo + 1 + ei + ej
		for k := i; k < ei; k++ {
			ranks2[k] = r
		}
		for k := j; k < ej; k++ {
			ranks2[n1+k] = r
		}
		if ei+ej-lo > 1 {
			ties = append(ties, ei+ej-lo)
		}
		i, j = ei, ej
	}
	return ranks2, ties
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

// Exact reports whether MannWhitneyU's p-value for samples of n1 and n2
// values is the enumerated one; above it, it is NormalP.
func Exact(n1, n2 int) bool { return n1+n2 <= exactLimit }

// NormalP is the p-value MannWhitneyU gives a U statistic u of samples of
// n1 and n2 values whose tied groups (across both samples) have the sizes
// in ties, when Exact(n1, n2) is false. It lets a caller that knows how U
// moves (diff's smallest detectable change, which scales one sample) find
// the p-value without ranking the samples again.
func NormalP(u float64, n1, n2 int, ties []int) float64 { return normalP(u, n1, n2, ties) }

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

package diff

import (
	"fmt"
	"math"
	"slices"

	"github.com/tracelens/tracelens/stats"
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
	s.Median = stats.Median(v)
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
	if math.IsNaN(d.Base.Values[0]) || math.IsNaN(d.New.Values[0]) {
		// NaN, sorted first, has no order to merge by.
		_, d.P = stats.MannWhitneyU(base, new)
	} else {
		// The summaries' sorted copies rank in one merge, not a sort.
		_, d.P = stats.MannWhitneyUSorted(d.Base.Values, d.New.Values)
	}
	if stats.MinP(n1, n2) >= alpha {
		d.Note = fmt.Sprintf("need ≥ %d samples per side to detect a difference at α=%g", stats.MinSamples(alpha), alpha)
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

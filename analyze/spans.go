package analyze

import (
	"cmp"
	"slices"

	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/trace"
)

// Span helpers over sorted disjoint spans (the unions unionSpans
// returns): how much of an interval they cover, whether they touch it.

// coveredBy reports whether at least half of g lies inside the union of
// merged, which is sorted and disjoint (see mergedSpans).
func coveredBy(g trace.Span, merged []trace.Span) bool {
	i, _ := slices.BinarySearchFunc(merged, g.Start, func(s trace.Span, at trace.Time) int { return cmp.Compare(s.End, at) })
	var in trace.Duration
	for ; i < len(merged) && merged[i].Start < g.End; i++ {
		lo, hi := max(g.Start, merged[i].Start), min(g.End, merged[i].End)
		if hi > lo {
			in += trace.Duration(hi - lo)
		}
	}
	return 2*in >= g.Dur()
}

// mergedSpans returns the union of spans as sorted disjoint spans.
func mergedSpans(spans []trace.Span) []trace.Span { return unionSpans(slices.Clone(spans)) }

// mergeSpans returns the total length of the union of spans (sorted in
// place).
func mergeSpans(spans []trace.Span) trace.Duration { return interval.UnionLength(spans) }

// overlapsAny reports whether s overlaps one of the sorted disjoint spans.
func overlapsAny(s trace.Span, merged []trace.Span) bool {
	i, _ := slices.BinarySearchFunc(merged, s.Start, func(m trace.Span, at trace.Time) int { return cmp.Compare(m.End, at) })
	return i < len(merged) && merged[i].Start < s.End
}

// overlap returns how long span a lies inside the sorted disjoint spans.
func overlap(spans []trace.Span, a trace.Span) trace.Duration {
	i, _ := slices.BinarySearchFunc(spans, a.Start, func(s trace.Span, at trace.Time) int { return cmp.Compare(s.End, at) })
	var d trace.Duration
	for ; i < len(spans) && spans[i].Start < a.End; i++ {
		if e, s := min(spans[i].End, a.End), max(spans[i].Start, a.Start); e > s {
			d += trace.Duration(e - s)
		}
	}
	return d
}

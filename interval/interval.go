// Package interval is the one interval arithmetic of tracelens: the union
// of time spans (GPU busy time, compile regions, a rank's compute) and how
// much of a span a union covers. Single-trace analysis (analyze) and run
// analysis (distributed) both use it, so "busy" and "covered" mean the
// same thing in both. It depends only on trace.
package interval

import (
	"cmp"
	"slices"

	"github.com/tracelens/tracelens/trace"
)

// Union returns the union of spans as sorted, disjoint spans. It sorts
// spans in place and reuses their storage, so the caller must not use
// spans afterwards. Overlapping and touching spans merge; a zero-length
// span that touches no other is kept (as a point, of no length), so that
// callers counting gaps between the spans see it: NonEmpty drops them first.
func Union(spans []trace.Span) []trace.Span {
	slices.SortFunc(spans, func(a, b trace.Span) int { return cmp.Compare(a.Start, b.Start) })
	merged := spans[:0]
	for _, s := range spans {
		if n := len(merged); n > 0 && s.Start <= merged[n-1].End {
			merged[n-1].End = max(merged[n-1].End, s.End)
			continue
		}
		merged = append(merged, s)
	}
	return merged
}

// UnionBounds is Union over Bounds: it sorts bounds in place and reuses
// their storage, so the caller must not use bounds afterwards. Without a
// name to carry, the sort moves half the bytes of a Span's and the
// storage holds no pointers for the collector to scan. Bounds already in
// start order (a step's work on one stream) are merged without the sort:
// the check stops at the first out of order, the sort would read them all.
func UnionBounds(bounds []Bounds) []Bounds {
	byStart := func(a, b Bounds) int { return cmp.Compare(a.Start, b.Start) }
	if !slices.IsSortedFunc(bounds, byStart) {
		slices.SortFunc(bounds, byStart)
	}
	merged := bounds[:0]
	for _, s := range bounds {
		if n := len(merged); n > 0 && s.Start <= merged[n-1].End {
			merged[n-1].End = max(merged[n-1].End, s.End)
			continue
		}
		merged = append(merged, s)
	}
	return merged
}

// NonEmpty removes, in place, the spans that end at or before their start,
// and returns the rest in their order.
func NonEmpty(spans []trace.Span) []trace.Span {
	return slices.DeleteFunc(spans, func(s trace.Span) bool { return s.End <= s.Start })
}

// Length returns the total length of sorted, disjoint spans (a Union).
func Length(union []trace.Span) trace.Duration {
	var d trace.Duration
	for _, s := range union {
		d += s.Dur()
	}
	return d
}

// UnionLength returns the length of the union of spans (sorted in place,
// as Union).
func UnionLength(spans []trace.Span) trace.Duration {
	return Length(Union(spans))
}

// Overlap returns the time of w that the sorted, disjoint union covers.
func Overlap(union []trace.Span, w trace.Span) trace.Duration {
	var d trace.Duration
	for _, s := range Within(union, w) {
		d += s.Dur()
	}
	return d
}

// Within returns the parts of the sorted, disjoint union inside w, in
// order; nil when none.
func Within(union []trace.Span, w trace.Span) []trace.Span {
	i, _ := slices.BinarySearchFunc(union, w.Start, func(s trace.Span, t trace.Time) int { return cmp.Compare(s.End, t) })
	var out []trace.Span
	for ; i < len(union) && union[i].Start < w.End; i++ {
		if lo, hi := max(union[i].Start, w.Start), min(union[i].End, w.End); hi > lo {
			out = append(out, trace.Span{Start: lo, End: hi})
		}
	}
	return out
}

// Bounds is a span's start and end without its name: 16 bytes where a
// trace.Span takes 32. The analysis keeps its per-activity interval lists
// (GPU busy time, one interval per kernel on a dense trace) as Bounds, so
// a 10 M-kernel trace's lists take half the memory (issue 27).
type Bounds struct {
	Start, End trace.Time
}

// Dur returns the interval's length.
func (b Bounds) Dur() trace.Duration { return trace.Duration(b.End - b.Start) }

// Span returns the interval as an unnamed trace.Span.
func (b Bounds) Span() trace.Span { return trace.Span{Start: b.Start, End: b.End} }

// BoundsOf returns the bounds of spans, in their order, in a slice of its
// own: what to keep of a Union once it is built.
func BoundsOf(spans []trace.Span) []Bounds {
	out := make([]Bounds, len(spans))
	for i, s := range spans {
		out[i] = Bounds{Start: s.Start, End: s.End}
	}
	return out
}

package analyze

import (
	"math"

	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/trace"
)

// The leaf work's two unions (the leaf ops', the calls' inside them) are
// of intervals that come in start order wherever the host's events were
// recorded on one thread (the model keeps them by thread, then start; a
// thread's leaf ops do not nest). Gathered, then sorted (interval's
// UnionBounds), they took a third of the leaf work's time on a trace of
// 400 k ops: two passes over the events and a sort of sorted data. Here
// they are merged as they come, in chunks side by side, into one array
// the size of the events; where they do not come in order, the caller
// sorts.
//
// The union of intervals sorted by start is the same whatever order
// those of one start come in, so long as none ends before it starts: an
// interval joins the run of those before it when it starts at or before
// their latest end, and that is a property of the set. An interval that
// ends before it starts could stand alone or be swallowed depending on
// its place among equal starts: such an interval sends the events to the
// sort, which gives what it always gave.

// orderedUnion merges intervals that come in start order, as they come,
// into its part of a shared array.
type orderedUnion struct {
	// out is the union so far: a slice of the shared array at the
	// chunk's first index, appended in place (a chunk adds at most as
	// many intervals as it has events, so it stays in its own part).
	out []interval.Bounds
	// first and last are the first and last starts added.
	first, last trace.Time
	// unordered says an interval came before an earlier start's, or
	// ended before it started: the union is void.
	unordered bool
}

// newOrderedUnion returns a union of nothing written from out[0].
func newOrderedUnion(out []interval.Bounds) orderedUnion {
	return orderedUnion{out: out[:0], first: math.MaxInt64, last: math.MinInt64}
}

// add takes [s, e) into the union.
func (u *orderedUnion) add(s, e trace.Time) {
	if s < u.last || e < s {
		u.unordered = true
	}
	u.first, u.last = min(u.first, s), s
	if n := len(u.out); n > 0 && s <= u.out[n-1].End {
		u.out[n-1].End = max(u.out[n-1].End, e)
		return
	}
	u.out = append(u.out, interval.Bounds{Start: s, End: e})
}

// joinOrdered returns the union of the chunks' unions (in chunk order),
// moved down the shared array they lie in, or false when any chunk's
// intervals, or two chunks', were out of order.
func joinOrdered(parts []orderedUnion) ([]interval.Bounds, bool) {
	if len(parts) == 0 {
		return nil, true
	}
	out := parts[0].out
	last := trace.Time(math.MinInt64)
	for k, p := range parts {
		if p.unordered || len(p.out) > 0 && p.first < last {
			return nil, false
		}
		if len(p.out) > 0 {
			last = p.last
		}
		if k == 0 {
			continue
		}
		for _, b := range p.out {
			if n := len(out); n > 0 && b.Start <= out[n-1].End {
				out[n-1].End = max(out[n-1].End, b.End)
				continue
			}
			// Below the chunk's own part, or at its place: a copy down.
			out = append(out, b)
		}
	}
	return out, true
}

// orderedLeafUnion returns the union of the leaf ops' intervals (ops:
// their columns; parent[i]: op i has an op inside it), or false where
// they do not come in start order.
func orderedLeafUnion(ops *spanColumns, parent []bool) ([]interval.Bounds, bool) {
	all := make([]interval.Bounds, len(ops.start))
	return joinOrdered(mapChunks(len(ops.start), func(lo, hi int) orderedUnion {
		u := newOrderedUnion(all[lo:])
		for i := lo; i < hi; i++ {
			if !parent[i] {
				u.add(ops.start[i], ops.end[i])
			}
		}
		return u
	}))
}

// orderedCallUnion returns the union of the intervals of the API calls
// (their columns) inside leaf ops (parent as for orderedLeafUnion), or
// false where they do not come in start order.
func orderedCallUnion(calls *callColumns, parent []bool) ([]interval.Bounds, bool) {
	all := make([]interval.Bounds, len(calls.op))
	return joinOrdered(mapChunks(len(calls.op), func(lo, hi int) orderedUnion {
		u := newOrderedUnion(all[lo:])
		for i := lo; i < hi; i++ {
			if op := calls.op[i]; op != trace.None && !parent[op] {
				u.add(calls.start[i], calls.end[i])
			}
		}
		return u
	}))
}

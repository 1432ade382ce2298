package analyze

import (
	"slices"

	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/parallel"
	"github.com/tracelens/tracelens/trace"
)

// leafWork is the host time in which a torch.profiler trace shows the
// program's own work: the spans of leaf ops (ops with no op inside them),
// less the CUDA runtime and driver calls inside them, merged over
// threads. The profiler records an op in callbacks around the op's own
// span, so its per-op cost lies outside these spans, except inside the
// runtime calls, which CUPTI's callbacks lengthen. A host interval
// therefore holds at most its length less its leafWork of profiler cost:
// profilerClock caps its per-event estimate there. The cap binds where
// the recorded ops are many and cheap to record: optim_deep's base
// records 3359 ops a step, which the per-event model priced at 20.3 ms
// of a 23.2 ms step; 14.1 ms of it lies outside leaf work, and the
// untraced run took 13.8 ms less than the traced one.
type leafWork struct {
	// spans is the work as sorted, disjoint intervals; cum[i] the total
	// length of spans[:i].
	spans []interval.Bounds
	cum   []trace.Duration
	// every holds every leafStride-th span's start: a search looks here
	// first, then among leafStride spans (a search over the spans
	// themselves missed the cache from its first probe).
	every []trace.Time
}

// leafStride is how many spans a start in leafWork.every stands for.
const leafStride = 64

// newLeafWork collects t's leaf-op work (host: t's HostTable, whose op
// columns it reads).
func newLeafWork(t *trace.Trace, host *hostTable) leafWork {
	// parent[i]: op i has an op inside it. Marked one place up, op
	// None's mark in the spare first place: no branch per op, which
	// half the ops (the roots among them) mispredicted.
	marks := make([]bool, len(t.Ops)+1)
	for _, p := range host.ops.parent {
		marks[p+1] = true
	}
	parent := marks[1:]
	// The leaves and the calls inside them are merged and cleaned side
	// by side, each in chunks of events: as they come where they come in
	// start order (orderedunion.go), else gathered and sorted.
	var leaves, calls []interval.Bounds
	parallel.Each(2, func(k int) {
		if k == 0 {
			u, ok := orderedLeafUnion(&host.ops, parent)
			if !ok {
				u = interval.UnionBounds(leafBounds(&host.ops, parent))
			}
			leaves = slices.DeleteFunc(u, func(b interval.Bounds) bool { return b.End <= b.Start })
		} else {
			u, ok := orderedCallUnion(&host.calls, parent)
			if !ok {
				u = interval.UnionBounds(leafCallBounds(t, parent))
			}
			calls = u
		}
	})
	return leafWorkOf(leaves, calls)
}

// leafWorkOf returns the work of the leaves less the calls (each sorted
// and disjoint): each leaf's parts outside every call. A part ends at a
// call that starts inside the leaf (one leaf's at most: they are
// disjoint) or at the leaf's end, so there are at most as many as
// leaves and calls together: the parts are written in one pass into
// arrays of that size, and copied to their own size only where that is
// an eighth or more too many (the work lives as long as the analysis; a
// count first was a second pass over both lists, and parts sized for
// the most there can be and always copied to size were a fifth of a
// Run's garbage).
func leafWorkOf(leaves, calls []interval.Bounds) leafWork {
	most := len(leaves) + len(calls)
	w := leafWork{spans: make([]interval.Bounds, most), cum: make([]trace.Duration, most+1)}
	n := leafParts(leaves, calls, w.spans, w.cum)
	w.spans, w.cum = w.spans[:n], w.cum[:n+1]
	if n < most-most/8 {
		w.spans, w.cum = slices.Clone(w.spans), slices.Clone(w.cum)
	}
	w.every = make([]trace.Time, (n+leafStride-1)/leafStride)
	for k := range w.every {
		w.every[k] = w.spans[k*leafStride].Start
	}
	return w
}

// leafParts writes the leaves' non-empty parts outside every call
// (leaves and calls sorted and disjoint) into spans, in order, and the
// running total of their lengths into cum (which holds the leading 0),
// and returns how many there are.
func leafParts(leaves, calls, spans []interval.Bounds, cum []trace.Duration) int {
	n := 0
	var total trace.Duration
	part := func(from, to trace.Time) {
		if to <= from {
			return
		}
		total += trace.Duration(to - from)
		spans[n], cum[n+1] = interval.Bounds{Start: from, End: to}, total
		n++
	}
	j := 0
	for _, s := range leaves {
		for j < len(calls) && calls[j].End <= s.Start {
			j++
		}
		from := s.Start
		for _, c := range calls[j:] {
			if c.Start >= s.End {
				break
			}
			part(from, c.Start)
			from = max(from, c.End)
		}
		part(from, s.End)
	}
	return n
}

// leafBounds returns the intervals of the leaf ops (ops: their columns;
// parent[i]: op i has an op inside it), in op order, gathered in chunks side by side. Counted
// first, then filled: appended one by one, a trace of 300 k ops spent
// most of newLeafWork regrowing them. Bounds, not Spans: half the bytes
// to sort and nothing for the collector to scan.
func leafBounds(ops *spanColumns, parent []bool) []interval.Bounds {
	return countedFill(len(ops.start), func(lo, hi int) int {
		n := 0
		for i := lo; i < hi; i++ {
			if !parent[i] {
				n++
			}
		}
		return n
	}, func(lo, hi int, dst []interval.Bounds) {
		dst = dst[:0]
		for i := lo; i < hi; i++ {
			if !parent[i] {
				dst = append(dst, interval.Bounds{Start: ops.start[i], End: ops.end[i]})
			}
		}
	})
}

// leafCallBounds returns the intervals of the API calls inside t's leaf
// ops, in call order, gathered as leafBounds gathers the leaves.
func leafCallBounds(t *trace.Trace, parent []bool) []interval.Bounds {
	return countedFill(len(t.APICalls), func(lo, hi int) int {
		n := 0
		for i := lo; i < hi; i++ {
			if op := t.APICalls[i].Op; op != trace.None && !parent[op] {
				n++
			}
		}
		return n
	}, func(lo, hi int, dst []interval.Bounds) {
		dst = dst[:0]
		for i := lo; i < hi; i++ {
			if op := t.APICalls[i].Op; op != trace.None && !parent[op] {
				dst = append(dst, interval.Bounds{Start: t.APICalls[i].Start, End: t.APICalls[i].End})
			}
		}
	})
}

// countedFill gathers the items of [0, n) that a chunk keeps into one
// array, in index order, with the chunks side by side: count(lo, hi) says
// how many the chunk keeps, then fill(lo, hi, dst) writes them into its
// own part of the array (dst has that length), so nothing is copied.
func countedFill[T any](n int, count func(lo, hi int) int, fill func(lo, hi int, dst []T)) []T {
	type chunk struct{ lo, hi, n int }
	chunks := mapChunks(n, func(lo, hi int) chunk { return chunk{lo, hi, count(lo, hi)} })
	at := make([]int, len(chunks)+1)
	for k, c := range chunks {
		at[k+1] = at[k] + c.n
	}
	out := make([]T, at[len(chunks)])
	parallel.Each(len(chunks), func(k int) { fill(chunks[k].lo, chunks[k].hi, out[at[k]:at[k+1]]) })
	return out
}

// in returns the work inside [a, b).
func (w leafWork) in(a, b trace.Time) trace.Duration {
	if b <= a || len(w.spans) == 0 {
		return 0
	}
	// lo: the first span ending after a; hi: the first span starting at
	// or after b. The spans are sorted, disjoint and not empty, so every
	// span from the first starting at or after a ends after a, and every
	// one before the span before it ends at or before a: lo is that
	// first one or the one before it.
	lo := w.firstFrom(a)
	if lo > 0 && w.spans[lo-1].End > a {
		lo--
	}
	return w.clipped(lo, w.firstFrom(b), a, b)
}

// clipped returns the work of spans [lo, hi) inside [a, b): their total,
// less the first's part before a and the last's after b.
func (w leafWork) clipped(lo, hi int, a, b trace.Time) trace.Duration {
	if lo >= hi {
		return 0
	}
	d := w.cum[hi] - w.cum[lo]
	// Clip the first and last spans to [a, b).
	if s := w.spans[lo]; s.Start < a {
		d -= trace.Duration(a - s.Start)
	}
	if s := w.spans[hi-1]; s.End > b {
		d -= trace.Duration(s.End - b)
	}
	return d
}

// firstFrom returns the first span starting at or after at: among every's
// starts, then among the leafStride spans before the one found there.
func (w leafWork) firstFrom(at trace.Time) int {
	k, _ := slices.BinarySearch(w.every, at)
	// Span k*leafStride starts at or after at (or is past the last),
	// span (k-1)*leafStride before it.
	lo, hi := max((k-1)*leafStride+1, 0), min(k*leafStride, len(w.spans))
	for lo < hi { // sort.Search's, without the call per probe
		h := int(uint(lo+hi) >> 1)
		if w.spans[h].Start < at {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo
}

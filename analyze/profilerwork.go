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
}

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
			u, ok := orderedCallUnion(t, parent)
			if !ok {
				u = interval.UnionBounds(leafCallBounds(t, parent))
			}
			calls = u
		}
	})
	// The leaves less the calls: each leaf's parts outside every call,
	// counted, then made at their exact size (the work lives as long as
	// the analysis; sized for the most there can be and then copied to
	// size, it was a fifth of a Run's garbage).
	n := leafParts(leaves, calls, nil, nil)
	w := leafWork{spans: make([]interval.Bounds, n), cum: make([]trace.Duration, n+1)}
	leafParts(leaves, calls, w.spans, w.cum)
	return w
}

// leafParts returns how many non-empty parts the leaves have outside
// every call (leaves and calls sorted and disjoint) and, when spans is
// not nil, writes them into spans, in order, and the running total of
// their lengths into cum (which holds the leading 0). One loop for the
// count and the fill: a call through a function per part cost a third
// of it.
func leafParts(leaves, calls, spans []interval.Bounds, cum []trace.Duration) int {
	n := 0
	part := func(from, to trace.Time) {
		if to <= from {
			return
		}
		if spans != nil {
			spans[n] = interval.Bounds{Start: from, End: to}
			cum[n+1] = cum[n] + trace.Duration(to-from)
		}
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
	// or after b.
	lo, _ := slices.BinarySearchFunc(w.spans, a, func(s interval.Bounds, t trace.Time) int {
		if s.End <= t {
			return -1
		}
		return 1
	})
	hi, _ := slices.BinarySearchFunc(w.spans, b, func(s interval.Bounds, t trace.Time) int {
		if s.Start < t {
			return -1
		}
		return 1
	})
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

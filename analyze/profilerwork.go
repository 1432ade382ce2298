package analyze

import (
	"slices"

	"github.com/tracelens/tracelens/interval"
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

// newLeafWork collects t's leaf-op work.
func newLeafWork(t *trace.Trace) leafWork {
	parent := make([]bool, len(t.Ops))
	for i := range t.Ops {
		if p := t.Ops[i].Parent; p != trace.None {
			parent[p] = true
		}
	}
	nLeaves, nCalls := 0, 0
	for i := range t.Ops {
		if !parent[i] {
			nLeaves++
		}
	}
	for i := range t.APICalls {
		if op := t.APICalls[i].Op; op != trace.None && !parent[op] {
			nCalls++
		}
	}
	// Sized first: appended one by one, a trace of 300 k ops spent most
	// of this function regrowing them.
	leaves, calls := make([]trace.Span, 0, nLeaves), make([]trace.Span, 0, nCalls)
	for i := range t.Ops {
		if !parent[i] {
			leaves = append(leaves, trace.Span{Start: t.Ops[i].Start, End: t.Ops[i].End})
		}
	}
	for i := range t.APICalls {
		if op := t.APICalls[i].Op; op != trace.None && !parent[op] {
			calls = append(calls, trace.Span{Start: t.APICalls[i].Start, End: t.APICalls[i].End})
		}
	}
	leaves, calls = interval.NonEmpty(interval.Union(leaves)), interval.Union(calls)
	work := appendSubtract(make([]trace.Span, 0, len(leaves)+len(calls)), leaves, calls)
	w := leafWork{spans: make([]interval.Bounds, len(work)), cum: make([]trace.Duration, len(work)+1)}
	for i, s := range work {
		w.spans[i] = interval.Bounds{Start: s.Start, End: s.End}
		w.cum[i+1] = w.cum[i] + s.Dur()
	}
	return w
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

package analyze

import (
	"sort"
	"strings"

	"github.com/tracelens/tracelens/parallel"
	"github.com/tracelens/tracelens/trace"
)

// dispatcherName is hookDispatcher of a frame named name, the answer a
// nameCache remembers: a module's call path is the same few frames
// (module.py's _wrapped_call_impl, _call_impl and inner at one line
// each), the parent of most frames of a deep stack, and parsing their
// names again for every child was most of hook-overhead's walk.
func dispatcherName(name string) bool {
	return hookDispatcher(&trace.PyFrame{Span: trace.Span{Name: name}})
}

// hookKeyName is hookKey of a frame named name (a dispatcher's callees are
// a few functions called again and again).
func hookKeyName(name string) string { return hookKey(&trace.PyFrame{Span: trace.Span{Name: name}}) }

// topOps answers how long the top-level ops on a thread that start in an
// interval took, from the ops' running totals and start times
// (topOpTimes), for intervals asked in (thread, start) order (the frames'
// own): each search gallops over the dense start times from the last
// one's answer (a search through the ops themselves missed the cache at
// every probe).
type topOps struct {
	*opTimes
	from int
	last threadTime
}

// opTimes are the running totals of the top-level ops' durations over
// Ops in their (thread, start) order (pre[i]: ops [0, i)), each op's
// start, and each thread's [lo, hi) of ops.
type opTimes struct {
	pre    []trace.Duration
	starts []trace.Time
	thread map[trace.Index][2]int
}

// newTopOps returns a topOps over the op times ot.
func newTopOps(ot *opTimes) *topOps { return &topOps{opTimes: ot} }

// in returns the time of top-level ops on thread th that start in
// [from, to] (what the ops between opAtFrom's answers for (th, from) and
// (th, to+1) took). A question before the last one (frames out of order)
// searches from the thread's first op.
func (o *topOps) in(th trace.Index, from, to trace.Time) trace.Duration {
	r, ok := o.thread[th]
	if !ok {
		return 0
	}
	k := threadTime{th, from}
	if k.th != o.last.th || k.at < o.last.at || o.from < r[0] {
		o.from = r[0]
	}
	o.last = k
	lo := gallopStarts(o.starts, r[1], from, o.from)
	hi := gallopStarts(o.starts, r[1], to+1, lo)
	o.from = lo
	return o.pre[hi] - o.pre[lo]
}

// gallopStarts returns the first i in [from, end) with starts[i] >= at,
// or end, where no op before from qualifies.
func gallopStarts(starts []trace.Time, end int, at trace.Time, from int) int {
	lo, hi, step := from, from, 1
	for hi < end && starts[hi] < at {
		lo, hi, step = hi+1, hi+step, step*2
	}
	hi = min(hi, end)
	return lo + sort.Search(hi-lo, func(j int) bool { return starts[lo+j] >= at })
}

// topOpTimes returns the op times (see opTimes) of the ops' columns:
// each chunk's own totals side by side, then each chunk's totals shifted
// by the chunks before it (integer sums: exact in any order). The starts
// are the column itself (the op times live only as long as the pass).
func topOpTimes(ops *spanColumns) *opTimes {
	n := len(ops.start)
	ot := &opTimes{pre: make([]trace.Duration, n+1), starts: ops.start, thread: ops.threads}
	type chunk struct {
		lo, hi int
		sum    trace.Duration
	}
	chunks := mapChunks(n, func(lo, hi int) chunk {
		c := chunk{lo: lo, hi: hi}
		for i := lo; i < hi; i++ {
			if ops.parent[i] == trace.None {
				c.sum += trace.Duration(ops.end[i] - ops.start[i])
			}
			ot.pre[i+1] = c.sum
		}
		return c
	})
	var off trace.Duration
	offsets := make([]trace.Duration, len(chunks))
	for k, c := range chunks {
		offsets[k] = off
		off += c.sum
	}
	parallel.Each(len(chunks), func(k int) {
		if offsets[k] == 0 {
			return
		}
		for i := chunks[k].lo; i < chunks[k].hi; i++ {
			ot.pre[i+1] += offsets[k]
		}
	})
	return ot
}

// dispatcherOf is hookDispatcher(f) remembered in m. The suffix test that
// rules out nearly every frame of a deep stack runs before the memo: it
// is cheaper than a slot's compare.
func dispatcherOf(m *nameCache[bool], f *trace.PyFrame) bool {
	n := f.Name
	if !strings.HasSuffix(n, "inner") && !strings.HasSuffix(n, "_call_impl") {
		return false
	}
	return m.get(n, dispatcherName)
}

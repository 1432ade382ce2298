package analyze

import (
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// dispatcherCache is hookDispatcher remembered for the last frame name
// in each of a few slots, then a map: a module's call path is the same few frames
// (module.py's _wrapped_call_impl, _call_impl and inner at one line
// each), the parent of most frames of a deep stack, and parsing their
// names again for every child was most of hook-overhead's walk.
type dispatcherCache struct {
	slot [16]struct {
		name   string
		is, ok bool
	}
	known map[string]bool
}

// of returns hookDispatcher(f).
func (c *dispatcherCache) of(f *trace.PyFrame) bool {
	n := f.Name
	if !strings.HasSuffix(n, "inner") && !strings.HasSuffix(n, "_call_impl") {
		return false
	}
	s := &c.slot[(uint(len(n))*7+uint(n[len(n)/2]))%uint(len(c.slot))]
	if s.ok && s.name == n {
		return s.is
	}
	v, seen := c.known[n]
	if !seen {
		if c.known == nil {
			c.known = map[string]bool{}
		}
		v = hookDispatcher(f)
		c.known[n] = v
	}
	s.name, s.is, s.ok = n, v, true
	return v
}

// hookKeyCache is hookKey remembered by frame name: the last name in
// each of a few slots, then a map (a dispatcher's callees are a few
// functions called again and again).
type hookKeyCache struct {
	slot  [16]struct{ name, key string }
	known map[string]string
}

// of returns hookKey(f).
func (c *hookKeyCache) of(f *trace.PyFrame) string {
	n := f.Name
	h := uint(len(n))
	if len(n) > 0 {
		h = h*31 + uint(n[len(n)-1])
	}
	s := &c.slot[h%uint(len(c.slot))]
	if s.name == n && n != "" {
		return s.key
	}
	key, seen := c.known[n]
	if !seen {
		if c.known == nil {
			c.known = map[string]string{}
		}
		key = hookKey(f)
		c.known[n] = key
	}
	s.name, s.key = n, key
	return key
}

// topOps answers how long the top-level ops on a thread that start in an
// interval took, from the running totals of the top-level ops' durations
// (topOpPrefix), for intervals asked in (thread, start) order (the
// frames' own): each search gallops from the last one's answer.
type topOps struct {
	t    *trace.Trace
	pre  []trace.Duration
	from int
	last threadTime
}

// newTopOps returns a topOps over t's ops with their running totals pre.
func newTopOps(t *trace.Trace, pre []trace.Duration) *topOps { return &topOps{t: t, pre: pre} }

// in returns the time of top-level ops on thread th that start in
// [from, to]. A question before the last one (frames out of order)
// searches from the start.
func (o *topOps) in(th trace.Index, from, to trace.Time) trace.Duration {
	k := threadTime{th, from}
	if k.th < o.last.th || k.th == o.last.th && k.at < o.last.at {
		o.from = 0
	}
	o.last = k
	lo := opAtFrom(o.t, k, o.from)
	hi := opAtFrom(o.t, threadTime{th, to + 1}, lo)
	o.from = lo
	if hi <= lo {
		return 0
	}
	return o.pre[hi] - o.pre[lo]
}

// topOpPrefix returns running totals of top-level op durations over Ops
// in their (thread, start) order: each chunk's own totals side by side,
// then each shifted by the chunks before it (integer sums: exact in any
// order).
func topOpPrefix(t *trace.Trace) []trace.Duration {
	ops := t.Ops
	pre := make([]trace.Duration, len(ops)+1)
	type chunk struct {
		lo, hi int
		sum    trace.Duration
	}
	chunks := mapChunks(len(ops), func(lo, hi int) chunk {
		var run trace.Duration
		for i := lo; i < hi; i++ {
			if ops[i].Parent == trace.None {
				run += ops[i].Dur()
			}
			pre[i+1] = run
		}
		return chunk{lo, hi, run}
	})
	var off trace.Duration
	offsets := make([]trace.Duration, len(chunks))
	for k, c := range chunks {
		offsets[k] = off
		off += c.sum
	}
	eachTask(len(chunks), func(k int) {
		if offsets[k] == 0 {
			return
		}
		for i := chunks[k].lo; i < chunks[k].hi; i++ {
			pre[i+1] += offsets[k]
		}
	})
	return pre
}

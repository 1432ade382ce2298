package analyze

import (
	"sort"
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
// [from, to] (what the ops between opAt's answers for (th, from) and
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

// topOpTimes returns t's op times (see opTimes): each chunk's own totals
// and starts side by side, then each chunk's totals shifted by the
// chunks before it (integer sums: exact in any order).
func topOpTimes(t *trace.Trace) *opTimes {
	ops := t.Ops
	ot := &opTimes{pre: make([]trace.Duration, len(ops)+1), starts: make([]trace.Time, len(ops)), thread: map[trace.Index][2]int{}}
	type chunk struct {
		lo, hi int
		sum    trace.Duration
		// firsts are the ops where a thread's ops begin.
		firsts []int
	}
	chunks := mapChunks(len(ops), func(lo, hi int) chunk {
		c := chunk{lo: lo, hi: hi}
		for i := lo; i < hi; i++ {
			o := &ops[i]
			if o.Parent == trace.None {
				c.sum += o.Dur()
			}
			ot.pre[i+1], ot.starts[i] = c.sum, o.Start
			if i == 0 || o.Thread != ops[i-1].Thread {
				c.firsts = append(c.firsts, i)
			}
		}
		return c
	})
	var off trace.Duration
	offsets := make([]trace.Duration, len(chunks))
	var firsts []int
	for k, c := range chunks {
		offsets[k] = off
		off += c.sum
		firsts = append(firsts, c.firsts...)
	}
	for j, i := range firsts {
		end := len(ops)
		if j+1 < len(firsts) {
			end = firsts[j+1]
		}
		ot.thread[ops[i].Thread] = [2]int{i, end}
	}
	eachTask(len(chunks), func(k int) {
		if offsets[k] == 0 {
			return
		}
		for i := chunks[k].lo; i < chunks[k].hi; i++ {
			ot.pre[i+1] += offsets[k]
		}
	})
	return ot
}

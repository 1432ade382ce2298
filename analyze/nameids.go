package analyze

import (
	"slices"
	"sort"

	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/trace"
)

// categoryID returns the id (CategoryFacts.cat) of category name, or -1
// when no activity has it: a loop over every kernel compares ids, not the
// names they stand for.
func (c *CategoryFacts) categoryID(name string) int {
	for i, n := range c.catNames {
		if n == name {
			return i
		}
	}
	return -1
}

// launchCountsOf is launchCounts with the launch calls the Launches fact
// found (l.launch): no name tests over every API call, and each thread's
// starts in a slice of its own size (calls come by thread: one map
// access per run of a thread's calls).
func launchCountsOf(t *trace.Trace, l *LaunchFacts) map[trace.Index][]trace.Time {
	counts := map[trace.Index]int{}
	eachThreadRun(t, l, func(th trace.Index, n int) { counts[th] += n })
	m := make(map[trace.Index][]trace.Time, len(counts))
	for th, n := range counts {
		m[th] = make([]trace.Time, 0, n)
	}
	th, cur := trace.None, []trace.Time(nil)
	for i := range t.APICalls {
		if !l.launch[i] {
			continue
		}
		c := &t.APICalls[i]
		if c.Thread != th || cur == nil {
			if cur != nil {
				m[th] = cur
			}
			th, cur = c.Thread, m[c.Thread]
		}
		cur = append(cur, c.Start)
	}
	if cur != nil {
		m[th] = cur
	}
	for _, v := range m {
		slices.Sort(v)
	}
	return m
}

// eachThreadRun calls f with each run of consecutive launch calls on one
// thread and its length.
func eachThreadRun(t *trace.Trace, l *LaunchFacts, f func(th trace.Index, n int)) {
	th, n := trace.None, 0
	for i := range t.APICalls {
		if !l.launch[i] {
			continue
		}
		if c := &t.APICalls[i]; c.Thread != th || n == 0 {
			if n > 0 {
				f(th, n)
			}
			th, n = c.Thread, 0
		}
		n++
	}
	if n > 0 {
		f(th, n)
	}
}

// opAtFrom returns the index of t's first op at or after k in the ops'
// (thread, start) order, for a key whose answer is known to be at least from:
// it gallops forward from there (a range's ops follow the last range's on
// the same thread) instead of searching all of Ops.
func opAtFrom(t *trace.Trace, k threadTime, from int) int {
	after := func(i int) bool {
		o := &t.Ops[i]
		return o.Thread > k.th || o.Thread == k.th && o.Start >= k.at
	}
	lo, hi, step := from, from, 1
	for hi < len(t.Ops) && !after(hi) {
		lo, hi, step = hi+1, hi+step, step*2
	}
	hi = min(hi, len(t.Ops))
	return lo + sort.Search(hi-lo, func(j int) bool { return after(lo + j) })
}

// idleCursor sums a device's idle time in intervals asked mostly in
// time order (the gaps between a chain's kernels): each search for the
// first busy interval starts where the last one ended when that is at or
// before the answer, instead of searching all of them.
type idleCursor struct {
	b    *BusyFacts
	dev  int32
	at   int
	busy []interval.Bounds
}

// idleIn returns the time device dev runs nothing inside [from, to): the
// total of BusyFacts.idleGaps(dev, from, to).
func (c *idleCursor) idleIn(dev int32, from, to trace.Time) trace.Duration {
	if c.busy == nil || dev != c.dev {
		c.dev, c.busy, c.at = dev, c.b.busy[dev], 0
	}
	spans := c.busy
	i := c.at
	if i > len(spans) || i > 0 && spans[i-1].End >= from {
		i = 0 // the answer lies before the cursor
	}
	// The first interval ending at or after from, galloping from i.
	hi, step := i, 1
	for hi < len(spans) && spans[hi].End < from {
		i, hi, step = hi+1, hi+step, step*2
	}
	hi = min(hi, len(spans))
	i += sort.Search(hi-i, func(j int) bool { return spans[i+j].End >= from })
	c.at = i
	var idle trace.Duration
	cur := from
	for ; i < len(spans) && spans[i].Start < to; i++ {
		if spans[i].Start > cur {
			idle += trace.Duration(spans[i].Start - cur)
		}
		cur = max(cur, spans[i].End)
	}
	if cur < to {
		idle += trace.Duration(to - cur)
	}
	return idle
}

package analyze

import (
	"cmp"
	"slices"

	"github.com/tracelens/tracelens/trace"
)

// Critical measures, for every GPU activity, how much of its time the GPU
// was the bottleneck: the part during which the next activity on its
// stream was already queued (its launch call had returned), or the part
// the host spent blocked in a synchronising call (a stream or device
// sync, a synchronous copy: the host waits for the GPU then) or, for a
// copy from or to pageable memory, in its own launch call (which returns
// only once the copy is done), whichever is longer. Only that part of a kernel's time
// is on the step's critical path. Shortening a kernel the host launches
// late anyway (a launch-bound or host-bound step: the next launch arrives
// after the kernel ends) makes the GPU idle longer and the step no
// shorter; a fix that saves GPU time saves wall time only in proportion.
// This is why a GPU-time saving (fp64 → fp32, TF32, fusion's traffic) in
// a step whose GPU is 18 % busy is quoted as GPU time, not as a share of
// the step.
var Critical = &Analyzer{
	Name: "critical-path",
	Doc: "For each GPU activity, the part of its time that delays the step: from when the next activity on its stream was " +
		"queued (its launch call returned; that activity starting within 2µs of this one's end) to its end, or the part of it " +
		"during which the host sat blocked in a synchronising call (syncs, synchronous copies) or, for a copy from or to " +
		"pageable memory, in its own launch call (which returns once the copy is done), whichever is longer. Activities " +
		"on a device without launch records count in full.",
	Requires: []*Analyzer{HostTable},
	Fact: func(p *Pass) (any, error) {
		host, err := hostTableOf(p)
		if err != nil {
			return nil, err
		}
		return newCritical(p.Trace, host), nil
	},
}

// CriticalFacts is the result of Critical.
type CriticalFacts struct {
	// crit is each GPU activity's critical time, within [0, duration],
	// in 4 bytes (issue 27: the facts are kept compact); a time that
	// does not fit (over 4.29 s) is critOverflow there and lies in
	// over.
	crit []uint32
	over map[int32]trace.Duration
}

// critOverflow marks a critical time kept in CriticalFacts.over.
const critOverflow = ^uint32(0)

// Of returns the part of GPU activity g's time during which the GPU was
// the bottleneck.
func (c *CriticalFacts) Of(g int) trace.Duration {
	if v := c.crit[g]; v != critOverflow {
		return trace.Duration(v)
	}
	return c.over[int32(g)]
}

// set records activity g's critical time d.
func (c *CriticalFacts) set(g int, d trace.Duration) {
	if d >= 0 && d < trace.Duration(critOverflow) {
		c.crit[g] = uint32(d)
		return
	}
	c.crit[g] = critOverflow
	if c.over == nil {
		c.over = map[int32]trace.Duration{}
	}
	c.over[int32(g)] = d
}

// queuedSlack is how late after an activity's end the next one on its
// stream may start and still count as having waited for it: the GPU's own
// launch latency between back-to-back kernels of one stream.
const queuedSlack = 2 * trace.Duration(1000)

// newCritical returns t's critical times (host: t's HostTable): in one
// pass over the model where it comes sorted by device, stream and start
// (as the model keeps it), else stream by stream.
func newCritical(t *trace.Trace, host *hostTable) *CriticalFacts {
	syncs := syncSpans(&host.calls)
	if c, ok := criticalInOrder(t, &host.calls, syncs); ok {
		return c
	}
	return criticalByStream(t, syncs)
}

// criticalByStream fills the critical times stream by stream (syncs: the
// blocking calls, merged), whatever the model's order.
func criticalByStream(t *trace.Trace, syncs []trace.Span) *CriticalFacts {
	c := &CriticalFacts{crit: make([]uint32, len(t.GPU))}
	// A device with launch records: a kernel without one was launched
	// before profiling (its queue time is unknown, not "early").
	launched := map[int32]bool{}
	for g := range t.GPU {
		if t.GPU[g].Launch != trace.None {
			launched[t.GPU[g].Device] = true
		}
	}
	for _, gs := range streamGroups(t.GPU) {
		c.stream(t, gs, syncs, launched[t.GPU[gs.at(0)].Device])
	}
	return c
}

// syncSpans returns the blocking calls (calls: the API calls' columns),
// merged: the host waits for the GPU inside them.
func syncSpans(calls *callColumns) []trace.Span {
	var syncs []trace.Span
	for i, k := range calls.kind {
		if k&callSync != 0 && calls.end[i] > calls.start[i] {
			syncs = append(syncs, calls.span(trace.Index(i)))
		}
	}
	return unionSpans(syncs)
}

// streamGroup is one stream's GPU activities in start order: the
// stretch [lo, hi) of the model, or, where the model is out of order,
// the indexes idx.
type streamGroup struct {
	lo, hi int
	idx    []int
}

// len returns the number of activities in the group.
func (s streamGroup) len() int {
	if s.idx != nil {
		return len(s.idx)
	}
	return s.hi - s.lo
}

// at returns the group's n-th activity.
func (s streamGroup) at(n int) int {
	if s.idx != nil {
		return s.idx[n]
	}
	return s.lo + n
}

// streamGroups returns each stream's activities in start order. The model
// is sorted by device, stream, start, so each stream is a stretch of it;
// only activities out of that order (built by hand) are grouped and
// sorted by index lists, 8 to 16 bytes an activity (issue 27).
func streamGroups(gpu []trace.GPUActivity) []streamGroup {
	sorted := slices.IsSortedFunc(gpu, func(a, b trace.GPUActivity) int {
		return cmp.Or(cmp.Compare(a.Device, b.Device), cmp.Compare(a.Stream, b.Stream), cmp.Compare(a.Start, b.Start))
	})
	var out []streamGroup
	if sorted {
		for lo := 0; lo < len(gpu); {
			hi := lo + 1
			for hi < len(gpu) && gpu[hi].Device == gpu[lo].Device && gpu[hi].Stream == gpu[lo].Stream {
				hi++
			}
			out = append(out, streamGroup{lo: lo, hi: hi})
			lo = hi
		}
		return out
	}
	type key struct{ dev, stream int32 }
	streams := map[key][]int{}
	for g := range gpu {
		k := key{gpu[g].Device, gpu[g].Stream}
		streams[k] = append(streams[k], g)
	}
	for _, gs := range streams {
		slices.SortFunc(gs, func(a, b int) int { return cmp.Compare(gpu[a].Start, gpu[b].Start) })
		out = append(out, streamGroup{idx: gs})
	}
	return out
}

// stream fills the critical time of one stream's activities gs, on a
// device with launch records or not.
func (c *CriticalFacts) stream(t *trace.Trace, gs streamGroup, syncs []trace.Span, launched bool) {
	for n := range gs.len() {
		g := gs.at(n)
		a := &t.GPU[g]
		if a.End <= a.Start {
			continue
		}
		dur := trace.Duration(a.End - a.Start)
		if !launched {
			c.set(g, dur) // no launch records: nothing tells the host was late
			continue
		}
		var crit trace.Duration
		if n+1 < gs.len() {
			next := &t.GPU[gs.at(n+1)]
			if next.Start <= a.End+trace.Time(queuedSlack) && next.Launch != trace.None {
				// Queued when its launch call returned, or when it
				// started if that was earlier (clock alignment).
				q := min(t.APICalls[next.Launch].End, next.Start)
				if q < a.End {
					crit = trace.Duration(a.End - max(q, a.Start))
				}
			}
		}
		crit = max(crit, overlap(syncs, a.Span))
		if a.Launch != trace.None && a.Kind == trace.Memcpy && (a.Src == trace.Pageable || a.Dst == trace.Pageable) {
			// A copy from or to pageable memory is synchronous: its
			// own launch call holds the host until it is done.
			crit = max(crit, overlap([]trace.Span{t.APICalls[a.Launch].Span}, a.Span))
		}
		c.set(g, min(crit, dur))
	}
}

// criticalShares sums, over the steady-state steps' GPU activities, their
// time and its critical part (the Critical fact) in all and per name, so
// a finding's GPU-time saving can be turned into the wall time it saves.
type criticalShares struct {
	byName      map[string][2]trace.Duration // critical, total
	crit, total trace.Duration
	ix          *index
	first       int32 // the first steady step
	// steadyDur holds each GPU activity's duration where it ran in the
	// steady state and is not empty, 0 where not (the activities the
	// sums leave out), steadyLong where the duration does not fit: what
	// shareOfActivities reads, 4 bytes an activity in a dense array,
	// where it read each activity's record and step at random.
	steadyDur []uint32
}

// steadyLong marks, in criticalShares.steadyDur, a duration read from the
// activity's record.
const steadyLong = ^uint32(0)

// newCriticalShares reads the Critical fact over the steps the metrics
// call steady (every step after the first, or the only one; the metrics
// have a step for each of the trace's). It reads no metric, so it is
// built beside them.
func newCriticalShares(ix *index) *criticalShares {
	c := &criticalShares{byName: map[string][2]trace.Duration{}, ix: ix}
	if ix.CriticalFacts == nil || ix.StepFacts == nil {
		return c
	}
	first := 0
	if len(ix.t.Steps) > 1 {
		first = 1
	}
	c.first = int32(first)
	// Each name's totals found by the name's address (nameCache), not
	// by hashing it twice per activity; integer sums, so the map filled
	// after holds what summing into it directly did.
	var sums nameCache[*[2]trace.Duration]
	newSum := func(string) *[2]trace.Duration { return new([2]trace.Duration) }
	c.steadyDur = make([]uint32, len(ix.t.GPU))
	for g := range ix.t.GPU {
		a := &ix.t.GPU[g]
		if st := ix.gpuStep[g]; st < int32(first) || a.End <= a.Start {
			continue
		}
		d, cr := trace.Duration(a.End-a.Start), ix.CriticalFacts.Of(g)
		c.steadyDur[g] = steadyLong
		if d < trace.Duration(steadyLong) {
			c.steadyDur[g] = uint32(d)
		}
		v := sums.get(a.Name, newSum)
		v[0] += cr
		v[1] += d
		c.crit += cr
		c.total += d
	}
	for name, v := range sums.byName {
		c.byName[name] = *v
	}
	return c
}

// shareOfActivities returns the critical part of the time of GPU
// activities gpu that ran in the steady state; like share, all GPU time's
// when none did.
func (c *criticalShares) shareOfActivities(gpu []int) float64 {
	var crit, total trace.Duration
	if c.ix != nil && c.ix.CriticalFacts != nil && c.steadyDur != nil {
		for _, g := range gpu {
			d := trace.Duration(c.steadyDur[g])
			switch c.steadyDur[g] {
			case 0: // not steady, or empty
				continue
			case steadyLong:
				a := &c.ix.t.GPU[g]
				d = trace.Duration(a.End - a.Start)
			}
			crit += c.ix.CriticalFacts.Of(g)
			total += d
		}
	}
	return c.ratio(crit, total)
}

// share returns the critical part of the named kernels' time, or of all
// GPU time when names is empty or none of them ran in the steady state;
// 1 when nothing ran (nothing says the GPU waited).
func (c *criticalShares) share(names []string) float64 {
	var crit, total trace.Duration
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		v := c.byName[n]
		crit += v[0]
		total += v[1]
	}
	return c.ratio(crit, total)
}

// ratio is crit over total, all GPU time's ratio when total is 0, and 1
// when nothing ran (nothing says the GPU waited).
func (c *criticalShares) ratio(crit, total trace.Duration) float64 {
	if total == 0 {
		crit, total = c.crit, c.total
	}
	if total == 0 {
		return 1
	}
	return min(max(float64(crit)/float64(total), 0), 1)
}

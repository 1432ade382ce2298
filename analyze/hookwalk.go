package analyze

import (
	"math/bits"
	"sort"

	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/trace"
)

// The walk behind hook-overhead: one pass over the frames' parent column
// finds the frames a hook dispatcher called and reads each of them once
// (its name, for the hook's key, and its time, for the dispatch's own
// time). The callees are spread over a deep stack's tens of megabytes of
// frames: read once per pass over them, each read was a cache miss, and
// the walk, the hooks' keys and their callers' callee time were three.

// dispatched is what the walk finds: the hooks among the frames a hook
// dispatcher called, in frame order, and each dispatcher's callee time,
// the time of every frame it called (hooks, the module's forward, library
// callees), by the dispatcher's rank among the dispatchers (rank).
type dispatched struct {
	hooks  []hookCall
	callee []trace.Duration
	rank   frameRanks
}

// hookCall is one call of a hook: its frame and its dispatcher's, its key
// (hookKey), its thread and span, read in the walk so that the stats need
// not read the frame again.
type hookCall struct {
	frame, parent, thread trace.Index
	start, end            trace.Time
	key                   string
}

// frameRanks numbers the frames whose bits are set, in order: a frame's
// rank is the set bits before it, the words' counts before its word
// (before) plus the bits below it in its word.
type frameRanks struct {
	bits   frameBits
	before []int32
}

// newFrameRanks returns the ranks of b's frames and how many there are.
func newFrameRanks(b frameBits) (frameRanks, int) {
	r := frameRanks{bits: b, before: make([]int32, len(b))}
	n := 0
	for w, word := range b {
		r.before[w] = int32(n)
		n += bits.OnesCount64(word)
	}
	return r, n
}

// of returns frame i's rank; i's bit must be set.
func (r frameRanks) of(i trace.Index) int {
	return int(r.before[i/64]) + bits.OnesCount64(r.bits[i/64]&(1<<(i%64)-1))
}

// walkBlock is how many frames the walk's parent scan takes before it
// reads the callees found there: their reads, one tight loop apart from
// the scan, are in flight together.
const walkBlock = 2048

// walkDispatched returns the hooks and the dispatchers' callee time
// (dispatched), walking the HostTable's frame parent column and
// dispatcher bits in chunks side by side. Each chunk sums callee time
// into its own slice by dispatcher rank (integer sums: exact in any
// order). The same hooks run every call: each chunk parses a frame name
// once.
func walkDispatched(t *trace.Trace, host *hostTable) dispatched {
	parents := host.frames.parent
	rank, n := newFrameRanks(host.dispatchers)
	type part struct {
		hooks  []hookCall
		callee []trace.Duration
	}
	parts := mapChunks(len(parents), func(lo, hi int) part {
		var p part
		if n == 0 {
			return p
		}
		p.callee = make([]trace.Duration, n)
		var names nameCache[string]
		found, name, dur := make([]int32, walkBlock), make([]string, walkBlock), make([]trace.Duration, walkBlock)
		for b := lo; b < hi; b += walkBlock {
			k := 0
			for i, par := range parents[b:min(b+walkBlock, hi)] {
				if par != trace.None && host.dispatchers.has(par) {
					found[k] = int32(b + i)
					k++
				}
			}
			// The callees' frames read in a loop of their own, their
			// loads in flight together, before the names are looked
			// up.
			for j, i := range found[:k] {
				f := &t.Frames[i]
				name[j], dur[j] = f.Name, f.Dur()
			}
			for j, i := range found[:k] {
				par := parents[i]
				p.callee[rank.of(par)] += dur[j]
				if key := names.get(name[j], hookKeyName); key != "" {
					f := &t.Frames[i]
					p.hooks = append(p.hooks, hookCall{frame: i, parent: par, thread: f.Thread, start: f.Start, end: f.End, key: key})
				}
			}
		}
		return p
	})
	d := dispatched{rank: rank}
	for k, p := range parts {
		if k == 0 {
			d.hooks, d.callee = p.hooks, p.callee // the first chunk's, the others added to them
			continue
		}
		d.hooks = append(d.hooks, p.hooks...)
		for j, v := range p.callee {
			d.callee[j] += v
		}
	}
	return d
}

// parentSpans returns the span of each hook call's dispatcher, read in a
// loop of its own (chunks side by side), the frames' loads in flight
// together.
func parentSpans(t *trace.Trace, hooks []hookCall) []trace.Span {
	spans := make([]trace.Span, len(hooks))
	inChunks(len(hooks), func(lo, hi int) {
		for j := lo; j < hi; j++ {
			spans[j] = t.Frames[hooks[j].parent].Span
		}
	})
	return spans
}

// hookTimes returns, for each hook call, the time of the top-level ops
// it ran and the GPU idle time while it ran: questions about one call
// each, asked chunk by chunk side by side, in the calls' (thread, start)
// order, so each chunk's cursors only move forward.
func (ix *index) hookTimes(hooks []hookCall) (inOps, idle []trace.Duration) {
	inOps, idle = make([]trace.Duration, len(hooks)), make([]trace.Duration, len(hooks))
	inChunks(len(hooks), func(lo, hi int) {
		ops := opsCursor{cols: &ix.host.ops}
		busy := busyCursor{b: ix.BusyFacts}
		for j := lo; j < hi; j++ {
			h := &hooks[j]
			inOps[j] = ops.topIn(h.thread, h.start, h.end)
			idle[j] = trace.Duration(h.end-h.start) - busy.busyIn(h.start, h.end)
		}
	})
	return inOps, idle
}

// opsCursor answers how long the top-level ops on a thread that start in
// an interval took, reading the ops' columns (start, end, parent) from
// the first op at the interval's start: a hook runs few ops, so summing
// them costs less than running totals over every op of the trace. For
// intervals asked in (thread, start) order, each search gallops from the
// last one's answer.
type opsCursor struct {
	cols *spanColumns
	th   trace.Index
	r    [2]int
	ok   bool
	from int
	last trace.Time
}

// topIn returns the time of the top-level ops on thread th that start in
// [from, to]. A question before the last one on its thread searches from
// the thread's first op.
func (c *opsCursor) topIn(th trace.Index, from, to trace.Time) trace.Duration {
	if !c.ok || th != c.th || from < c.last {
		c.r, c.ok = c.cols.threads[th]
		c.th, c.from = th, c.r[0]
		if !c.ok {
			c.ok = true // remembered: a thread without ops stays without
			c.r = [2]int{}
		}
	}
	c.last = from
	starts, end := c.cols.start, c.r[1]
	i := gallopStarts(starts, end, from, c.from)
	c.from = i
	var sum trace.Duration
	for ; i < end && starts[i] <= to; i++ {
		if c.cols.parent[i] == trace.None {
			sum += trace.Duration(c.cols.end[i] - starts[i])
		}
	}
	return sum
}

// busyCursor is BusyFacts.busyIn for intervals asked mostly in time
// order: each device's search for its first busy interval gallops from
// where the last one's ended, instead of searching all of them.
type busyCursor struct {
	b    *BusyFacts
	at   []int
	busy [][]interval.Bounds
	last trace.Time
}

// busyIn returns the GPU busy time of all devices inside [from, to) (as
// BusyFacts.busyIn). A question before the last one searches from each
// device's first interval.
func (c *busyCursor) busyIn(from, to trace.Time) trace.Duration {
	if c.busy == nil {
		c.at = make([]int, len(c.b.devices))
		c.busy = make([][]interval.Bounds, len(c.b.devices))
		for k, dev := range c.b.devices {
			c.busy[k] = c.b.busy[dev]
		}
	}
	if from < c.last {
		clear(c.at)
	}
	c.last = from
	var total trace.Duration
	for k, spans := range c.busy {
		// The first interval ending at or after from: every one before
		// the cursor ends before the last question's from.
		i, hi, step := c.at[k], c.at[k], 1
		for hi < len(spans) && spans[hi].End < from {
			i, hi, step = hi+1, hi+step, step*2
		}
		hi = min(hi, len(spans))
		i += sort.Search(hi-i, func(j int) bool { return spans[i+j].End >= from })
		c.at[k] = i
		for ; i < len(spans) && spans[i].Start < to; i++ {
			s, e := max(spans[i].Start, from), min(spans[i].End, to)
			if e > s {
				total += trace.Duration(e - s)
			}
		}
	}
	return total
}

package analyze

import (
	"math/bits"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tracelens/tracelens/parallel"
	"github.com/tracelens/tracelens/trace"
)

// HostTable holds the few fields of the framework ops and Python frames
// that the whole-trace passes read (start, end, parent, thread) in dense
// columns (hostTable). An op is 96 bytes and a frame 56, and a pass that
// reads one or two of their fields streams all of them: 40 MB each on a
// trace of 400 k ops and 700 k frames, 4 ms on one core, and the steps'
// trace span, the profiler clock's starts and leaf work and the hook
// dispatch each made such passes. The columns are 24 bytes an event,
// read once here; the families' bounds (the trace span's part) come with
// the read. Its value is a *hostTable.
var HostTable = &Analyzer{
	Name: "host-table",
	Doc:  "Gathers the start, end, parent and thread of every framework op and Python frame, and the start, end, op, thread and kind (sync, launch) of every API call, into dense columns that the whole-trace passes read.",
	Fact: func(p *Pass) (any, error) { return newHostTable(p.Trace), nil },
}

// hostTable is the ops' and the frames' columns. Of the frames, only
// the parent column is by frame; their start, end and thread columns
// are nil: no pass reads them but the profiler clock, which counts the
// frames' starts and searches the frames themselves when they come
// sorted by start (frames.sorted: a sorted copy of 2 M frames' starts
// was a seventh of the table's time on a torch.compile trace, for a few
// thousand searches). A Run's garbage must fit under the
// collector's goal (BenchmarkRunOnTrace, the CLI's membudget): each
// column is made anew on every Run, so none is made that no pass reads.
type hostTable struct {
	ops, frames spanColumns
	// calls are the API calls' columns (hostcalls.go).
	calls callColumns
	// dispatchers marks the frames that are a hook dispatcher
	// (hookDispatcher), a bit a frame: hook-overhead asks it of every
	// frame's parent, and the parent read from the frames themselves
	// missed the cache at nearly every frame of a deep stack (a
	// fiftieth of a second on 7 M frames); the name is at hand here.
	// modules marks the nn.Module frames (moduleFrame), which the
	// annotations table reads: a pass over every frame's name of its
	// own otherwise.
	dispatchers, modules frameBits
	// frameEvery holds every frameStride-th frame's start (frames 0,
	// frameStride, ...): where the frames come sorted, a search of their
	// starts looks here first and then among frameStride frames, not
	// over the 56-byte frames from the first probe (each probe a miss).
	frameEvery []trace.Time
}

// frameStride is how many frames a start in hostTable.frameEvery stands
// for.
const frameStride = 64

// frameBits is a bit per frame.
type frameBits []uint64

// newFrameBits returns the bits of n frames, none set.
func newFrameBits(n int) frameBits { return make(frameBits, (n+63)/64) }

// set sets frame i's bit. Chunks set bits side by side: a chunk's first
// and last words may be another chunk's too, so the bit is set
// atomically (the frames marked are few: rarely contended).
func (b frameBits) set(i int) { atomic.OrUint64(&b[i/64], 1<<(i%64)) }

// has reports whether frame i's bit is set.
func (b frameBits) has(i trace.Index) bool { return b[i/64]&(1<<(i%64)) != 0 }

// each calls fn with the frames whose bits are set, in order, skipping
// the words with none.
func (b frameBits) each(fn func(i int)) {
	for w, word := range b {
		for ; word != 0; word &= word - 1 {
			fn(w*64 + bits.TrailingZeros64(word))
		}
	}
}

// spanColumns are one host family's columns, by the family's index, and
// the earliest start and latest end of its spans.
type spanColumns struct {
	start, end []trace.Time
	parent     []trace.Index
	// name is each event's name as an index into names, the family's
	// distinct names (the ops'; nil for the frames): a pass that
	// classifies names does it once per distinct name, into a table it
	// reads by the 4-byte column.
	name  []int32
	names []string
	// threads are the [lo, hi) of each thread's events, for a family in
	// thread order (the ops; not a column: a thread's events are one
	// run of them).
	threads map[trace.Index][2]int
	bounds  spanBounds
	// sorted says the events come in start order (the model keeps them
	// by thread, then start: so they do when all are on one thread).
	sorted bool
}

// newSpanColumns returns columns for n events (bounds: of none): the
// parent column, and the start and end columns when full.
func newSpanColumns(n int, full bool) spanColumns {
	c := spanColumns{parent: make([]trace.Index, n), bounds: newBounds()}
	if full {
		c.start, c.end, c.name = make([]trace.Time, n), make([]trace.Time, n), make([]int32, n)
	}
	return c
}

// columnsChunk is what a chunk of a family's events adds to its columns
// besides the rows: its spans' bounds and the events where a thread's
// run begins.
type columnsChunk struct {
	lo, hi int
	bounds spanBounds
	firsts []int
	// names are the chunk's distinct names, its name column's values
	// indexing them until join numbers them over the family.
	names []string
	// descends says a start in the chunk is earlier than the one before
	// it; first and last are its first and last starts (whether the
	// family comes sorted).
	descends    bool
	first, last trace.Time
}

// join takes the chunks' bounds into c's (a minimum and a maximum: any
// order) and, with thread (the thread of an event), the threads' runs
// from the chunks' firsts, in chunk order.
func (c *spanColumns) join(parts []columnsChunk, thread func(i int) trace.Index) {
	var firsts []int
	c.sorted = true
	for k, p := range parts {
		if b := p.bounds; b.any {
			c.bounds.start, c.bounds.end, c.bounds.any = min(c.bounds.start, b.start), max(c.bounds.end, b.end), true
		}
		firsts = append(firsts, p.firsts...)
		if p.descends || k > 0 && p.first < parts[k-1].last {
			c.sorted = false
		}
	}
	c.joinNames(parts)
	if thread == nil {
		return
	}
	c.threads = make(map[trace.Index][2]int, len(firsts))
	for j, i := range firsts {
		end := len(c.parent)
		if j+1 < len(firsts) {
			end = firsts[j+1]
		}
		c.threads[thread(i)] = [2]int{i, end}
	}
}

// joinNames numbers the chunks' names over the family, first seen first
// in chunk order (the same numbers on any core count), and renumbers a
// chunk's column where its own numbers differ, chunks side by side.
func (c *spanColumns) joinNames(parts []columnsChunk) {
	if c.name == nil {
		return
	}
	id := map[string]int32{}
	remap := make([][]int32, len(parts))
	for k, p := range parts {
		same := true
		for j, n := range p.names {
			g, ok := id[n]
			if !ok {
				g = int32(len(c.names))
				id[n] = g
				c.names = append(c.names, n)
			}
			remap[k] = append(remap[k], g)
			same = same && g == int32(j)
		}
		if same {
			remap[k] = nil
		}
	}
	parallel.Each(len(parts), func(k int) {
		if m := remap[k]; m != nil {
			col := c.name[parts[k].lo:parts[k].hi]
			for i, v := range col {
				col[i] = m[v]
			}
		}
	})
}

// newHostTable reads t's ops and frames into columns, each family in
// chunks side by side.
func newHostTable(t *trace.Trace) *hostTable {
	h := &hostTable{ops: newSpanColumns(len(t.Ops), true), frames: newSpanColumns(len(t.Frames), false),
		dispatchers: newFrameBits(len(t.Frames)), modules: newFrameBits(len(t.Frames)), frameEvery: make([]trace.Time, (len(t.Frames)+frameStride-1)/frameStride)}
	// The families are read side by side: the table is the first
	// fact, the profiler clock's chain waits on it, and each family's join
	// (and the frame starts' sort) runs on one core: read one family after
	// the other, the table put 6-8 ms on the facts' longest chain at 16
	// cores.
	var wg sync.WaitGroup
	wg.Go(func() { h.readOps(t) })
	wg.Go(func() { h.readCalls(t) })
	h.readFrames(t)
	wg.Wait()
	return h
}

// readOps fills the ops' columns in chunks side by side. Its loop and
// readFrames' are two, not one generic walk: a call through a field
// accessor per event costs what the columns save on the smaller passes.
func (h *hostTable) readOps(t *trace.Trace) {
	h.ops.join(mapChunks(len(t.Ops), func(lo, hi int) columnsChunk {
		c := columnsChunk{lo: lo, hi: hi, bounds: newBounds()}
		var ids nameCache[int32]
		newID := func(n string) int32 {
			c.names = append(c.names, n)
			return int32(len(c.names) - 1)
		}
		if lo == hi {
			return c
		}
		prev := t.Ops[lo].Start
		for i := lo; i < hi; i++ {
			o := &t.Ops[i]
			h.ops.start[i], h.ops.end[i], h.ops.parent[i], h.ops.name[i] = o.Start, o.End, o.Parent, ids.get(o.Name, newID)
			c.bounds.widen(&o.Span)
			c.descends = c.descends || o.Start < prev
			prev = o.Start
			if i == 0 || o.Thread != t.Ops[i-1].Thread {
				c.firsts = append(c.firsts, i)
			}
		}
		c.first, c.last = t.Ops[lo].Start, prev
		return c
	}), func(i int) trace.Index { return t.Ops[i].Thread })
}

// readFrames fills the frames' parent column and their bits, and finds
// whether they come sorted by start, in chunks side by side.
func (h *hostTable) readFrames(t *trace.Trace) {
	parts := mapChunks(len(t.Frames), func(lo, hi int) columnsChunk {
		c := columnsChunk{lo: lo, hi: hi, bounds: newBounds()}
		if lo == hi {
			return c
		}
		var dispatchers nameCache[bool]
		prev := t.Frames[lo].Start
		for i := lo; i < hi; i++ {
			f := &t.Frames[i]
			h.frames.parent[i] = f.Parent
			c.bounds.widen(&f.Span)
			c.descends = c.descends || f.Start < prev
			prev = f.Start
			if i%frameStride == 0 {
				h.frameEvery[i/frameStride] = f.Start
			}
			// The name tests look at a byte before comparing: on
			// millions of frames the two suffix and the prefix
			// comparisons were as long as the rest of the loop.
			if dispatcherShape(f.Name) && dispatcherOf(&dispatchers, f) {
				h.dispatchers.set(i)
			}
			if moduleName(f.Name) {
				h.modules.set(i)
			}
		}
		c.first, c.last = t.Frames[lo].Start, prev
		return c
	})
	h.frames.join(parts, nil)
}

// dispatcherShape reports whether a frame named n may be a hook
// dispatcher (hookDispatcher): named "…torch/nn/modules/module.py(N):
// inner" or "…: _call_impl". It is what hookDispatcher asks of the name,
// less the parse, so it answers true for every dispatcher: the few it
// passes are asked of hookDispatcher (memoized). The suffix test alone
// passed a seventh of a torch.compile trace's 2 M frames (functools
// wrappers, _wrapped_call_impl) to the memo, which missed its slots and
// hashed the name (half the table's time); the last byte is looked at
// first.
func dispatcherShape(n string) bool {
	var end int // where the ": fn" after the line number begins
	switch {
	case len(n) < len("(): inner"):
		return false
	case n[len(n)-1] == 'r' && n[len(n)-len("): inner"):] == "): inner":
		end = len(n) - len(": inner")
	case n[len(n)-1] == 'l' && strings.HasSuffix(n, "): _call_impl"):
		end = len(n) - len(": _call_impl")
	default:
		return false
	}
	// n[:end] is the file, "(", the line's digits and ")".
	open := end - 2
	for open >= 0 && n[open] >= '0' && n[open] <= '9' {
		open--
	}
	return open >= 0 && n[open] == '(' && strings.HasSuffix(n[:open], "torch/nn/modules/module.py")
}

// moduleName is moduleFrame's test (the name starts "nn.Module: "), its
// first byte looked at first.
func moduleName(n string) bool {
	const prefix = "nn.Module: "
	return len(n) >= len(prefix) && n[0] == 'n' && n[:len(prefix)] == prefix
}

// hostTableOf is the HostTable fact of p's analyzer, which must require
// it.
func hostTableOf(p *Pass) (*hostTable, error) {
	return FactOf[*hostTable](p, HostTable)
}

// byName returns fn of each of c's distinct names, by name number: what
// a pass over the name column reads instead of the names.
func byName[V any](c *spanColumns, fn func(string) V) []V {
	out := make([]V, len(c.names))
	for k, n := range c.names {
		out[k] = fn(n)
	}
	return out
}

// oneOf returns a test of whether a name is one of names (for byName).
func oneOf(names ...string) func(string) bool {
	return func(n string) bool { return slices.Contains(names, n) }
}

// firstIn returns op i or the innermost op enclosing it whose name number
// marks in (byName's answer), or trace.None: a walk up the parent and
// name columns, not the ops.
func (c *spanColumns) firstIn(i trace.Index, in []bool) trace.Index {
	for ; i != trace.None; i = c.parent[i] {
		if in[c.name[i]] {
			return i
		}
	}
	return trace.None
}

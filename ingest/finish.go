package ingest

// The finish passes that run after the last event: sorting, linking
// launches to GPU work, nesting host events, Python frame parents, steps.

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/tracelens/tracelens/trace"
)

// bySpan orders spans by start, the enclosing one first at equal starts.
func bySpan(a, b trace.Span) int {
	if c := cmp.Compare(a.Start, b.Start); c != 0 {
		return c
	}
	return cmp.Compare(b.End, a.End) // longer (enclosing) first
}

// byThread orders host events by thread, then start, enclosing first: the
// order nest and frameParents walk them in.
func byThread[T any](key func(*T) (trace.Index, trace.Span)) func(a, b T) int {
	return func(a, b T) int {
		ta, sa := key(&a)
		tb, sb := key(&b)
		if c := cmp.Compare(ta, tb); c != 0 {
			return c
		}
		return bySpan(sa, sb)
	}
}

// sortStable sorts s unless it already is: profilers mostly write events
// in order, and checking is one pass while sorting moves big structs.
func sortStable[T any](s []T, cmp func(a, b T) int) {
	if !slices.IsSortedFunc(s, cmp) {
		slices.SortStableFunc(s, cmp)
	}
}

// sortByThread sorts host events by byThread(key) unless they already
// are. The check reads the records in place: sortStable's comparison takes
// two records by value, and copying 2 M frames twice each made the check
// alone ~30 ms after the last event. It checks ranges of the records in up
// to workers goroutines.
func sortByThread[T any](s []T, key func(*T) (trace.Index, trace.Span), workers int) {
	var unsorted atomic.Bool
	parallelRanges(len(s), workers, 1<<16, func(lo, hi int) {
		for i := max(lo, 1); i < hi; i++ {
			ta, sa := key(&s[i-1])
			tb, sb := key(&s[i])
			if ta > tb || ta == tb && bySpan(sa, sb) > 0 {
				unsorted.Store(true)
				return
			}
		}
	})
	if unsorted.Load() {
		slices.SortStableFunc(s, byThread(key))
	}
}

func (m *merger) sortAll() {
	t := m.t
	workers := len(m.remap)
	if !m.gpuSorted {
		sortStable(t.GPU, func(a, b trace.GPUActivity) int {
			if c := cmp.Compare(a.Device, b.Device); c != 0 {
				return c
			}
			if c := cmp.Compare(a.Stream, b.Stream); c != 0 {
				return c
			}
			return bySpan(a.Span, b.Span)
		})
	}
	sortByThread(t.APICalls, func(a *trace.APICall) (trace.Index, trace.Span) { return a.Thread, a.Span }, workers)
	sortByThread(t.Ops, func(o *trace.Op) (trace.Index, trace.Span) { return o.Thread, o.Span }, workers)
	sortByThread(t.Frames, func(f *trace.PyFrame) (trace.Index, trace.Span) { return f.Thread, f.Span }, workers)
	sortByThread(t.Annotations, func(a *trace.Annotation) (trace.Index, trace.Span) { return a.Thread, a.Span }, workers)
	sortStable(t.GPUAnnotations, func(a, b trace.Annotation) int { return bySpan(a.Span, b.Span) })
	sortStable(t.Memory, func(a, b trace.MemoryEvent) int { return cmp.Compare(a.At, b.At) })
}

// linkLaunches joins GPU activity to the API call with the same
// correlation id. Flow events (ac2g) are used only where a trace carries
// no correlation args (legacy Kineto): in current traces many flow ends sit
// on calls that launched nothing, so they are never preferred.
func (m *merger) linkLaunches() {
	t := m.t
	m.correlateByFlows()
	byCorr := make(map[int64]trace.Index, len(t.APICalls))
	for i := range t.APICalls {
		if c := t.APICalls[i].Correlation; c != 0 {
			byCorr[c] = trace.Index(i)
		}
	}
	for i := range t.GPU {
		g := &t.GPU[i]
		if g.Correlation == 0 {
			continue
		}
		if a, ok := byCorr[g.Correlation]; ok {
			g.Launch = a
			if first := t.APICalls[a].FirstGPU; first == trace.None || t.GPU[first].Start > g.Start {
				t.APICalls[a].FirstGPU = trace.Index(i)
			}
		}
	}
}

// correlateByFlows gives API calls and GPU activity without a correlation
// arg the id of the flow that starts (s) or ends (f) at their timestamp on
// their lane.
func (m *merger) correlateByFlows() {
	t := m.t
	missing := false
	for i := range t.GPU {
		if t.GPU[i].Correlation == 0 {
			missing = true
			break
		}
	}
	if !missing || len(m.flows) == 0 {
		return
	}
	type at struct {
		thread trace.Index
		ts     trace.Time
	}
	starts := map[at]int64{}
	ends := map[trace.Time]int64{}
	for _, f := range m.flows {
		if f.start {
			starts[at{f.thread, f.ts}] = f.id
		} else {
			ends[f.ts] = f.id
		}
	}
	for i := range t.APICalls {
		a := &t.APICalls[i]
		if a.Correlation == 0 {
			a.Correlation = starts[at{a.Thread, a.Start}]
		}
	}
	for i := range t.GPU {
		g := &t.GPU[i]
		if g.Correlation == 0 {
			g.Correlation = ends[g.Start]
		}
	}
}

// nest resolves, per host thread, each op's parent op and the innermost op
// and Python frame around every op and API call. Frames, ops and API calls
// are each sorted by (thread, start, longest first), so a three-way merge
// visits every interval of a thread in nesting order, and a stack of open
// intervals gives the innermost encloser in O(1) per event.
func (m *merger) nest() {
	t := m.t
	const (
		kFrame = iota
		kOp
		kAPI
		kNone
	)
	type open struct {
		start, end trace.Time
		op, frame  trace.Index
	}
	var stack []open
	fi, oi, ai := 0, 0, 0
	// before reports whether interval a comes before b: earlier start,
	// then longer, then frame before op before API call.
	before := func(as, ae trace.Time, ak int, bs, be trace.Time, bk int) bool {
		if as != bs {
			return as < bs
		}
		if ae != be {
			return ae > be
		}
		return ak < bk
	}
	for th := trace.Index(0); th < trace.Index(len(t.Threads)); th++ {
		stack = stack[:0]
		for {
			kind := kNone
			var s, e trace.Time
			if fi < len(t.Frames) && t.Frames[fi].Thread == th {
				kind, s, e = kFrame, t.Frames[fi].Start, t.Frames[fi].End
			}
			if oi < len(t.Ops) && t.Ops[oi].Thread == th {
				if o := &t.Ops[oi]; kind == kNone || before(o.Start, o.End, kOp, s, e, kind) {
					kind, s, e = kOp, o.Start, o.End
				}
			}
			if ai < len(t.APICalls) && t.APICalls[ai].Thread == th {
				if a := &t.APICalls[ai]; kind == kNone || before(a.Start, a.End, kAPI, s, e, kind) {
					kind, s, e = kAPI, a.Start, a.End
				}
			}
			if kind == kNone {
				break
			}
			for len(stack) > 0 && !(stack[len(stack)-1].start <= s && e <= stack[len(stack)-1].end) {
				stack = stack[:len(stack)-1]
			}
			op, frame := trace.None, trace.None
			if len(stack) > 0 {
				op, frame = stack[len(stack)-1].op, stack[len(stack)-1].frame
			}
			switch kind {
			case kFrame:
				stack = append(stack, open{start: s, end: e, op: op, frame: trace.Index(fi)})
				fi++
			case kOp:
				t.Ops[oi].Parent, t.Ops[oi].Frame = op, frame
				stack = append(stack, open{start: s, end: e, op: trace.Index(oi), frame: frame})
				oi++
			case kAPI:
				t.APICalls[ai].Op, t.APICalls[ai].Frame = op, frame
				ai++
			}
		}
	}
}

// frameParents resolves Python parent ids; frames without ids (JAX) take
// the innermost enclosing frame on their thread. Parent ids are resolved
// over ranges of the frames in parallel; only if a frame without an id is
// left (JAX) does the walk with a stack of enclosing frames run, serially.
func (m *merger) frameParents() {
	t := m.t
	byID := newFrameIndex(t.Frames)
	var noID atomic.Bool
	parallelRanges(len(t.Frames), len(m.remap), 1<<15, func(lo, hi int) {
		left := false
		for i := lo; i < hi; i++ {
			f := &t.Frames[i]
			if p, ok := byID.get(f.PyParentID); ok && f.PyParentID != 0 && p != trace.Index(i) {
				f.Parent = p
			} else if f.PyID == 0 {
				left = true
			}
		}
		if left {
			noID.Store(true)
		}
	})
	if noID.Load() {
		m.framesByStack(byID)
	}
}

// framesByStack resolves every frame's parent walking each thread's frames
// with a stack of the enclosing ones: a frame's parent is the frame its
// parent id names, or, if it has no id, the innermost enclosing frame.
func (m *merger) framesByStack(byID frameIndex) {
	t := m.t
	var stack []trace.Index
	lastThread := trace.Index(-1)
	for i := range t.Frames {
		f := &t.Frames[i]
		if f.Thread != lastThread {
			stack, lastThread = stack[:0], f.Thread
		}
		for len(stack) > 0 && !t.Frames[stack[len(stack)-1]].Contains(f.Span) {
			stack = stack[:len(stack)-1]
		}
		if p, ok := byID.get(f.PyParentID); ok && f.PyParentID != 0 && p != trace.Index(i) {
			f.Parent = p
		} else if f.PyID == 0 && len(stack) > 0 {
			f.Parent = stack[len(stack)-1]
		}
		stack = append(stack, trace.Index(i))
	}
}

// frameIndex finds a frame by its Python id. Kineto numbers frames 1, 2,
// 3 ... so the ids are dense and a slice over their range serves: 1.93 M
// frames index in 0.03 s instead of a map's 0.54 s. Sparse ids (a file
// merged from several runs, or crafted) fall back to a map.
type frameIndex struct {
	base  int64
	dense []trace.Index
	byID  map[int64]trace.Index
}

func newFrameIndex(frames []trace.PyFrame) frameIndex {
	lo, hi, n := int64(math.MaxInt64), int64(math.MinInt64), 0
	for i := range frames {
		if id := frames[i].PyID; id != 0 {
			lo, hi, n = min(lo, id), max(hi, id), n+1
		}
	}
	var x frameIndex
	if n == 0 {
		return x
	}
	// hi-lo cannot overflow into a small number: both are in int64 and
	// the difference is compared as uint64.
	// A slot is 4 bytes, a map entry ~40: the slice is the smaller up to
	// ids an eighth as dense as 1, 2, 3 (the synthetic copies class: a
	// third, which left 7.5% of its reading to the map).
	if span := uint64(hi - lo); span < uint64(8*n+1024) {
		x.base = lo
		x.dense = make([]trace.Index, span+1)
		for i := range x.dense {
			x.dense[i] = trace.None
		}
		for i := range frames {
			if id := frames[i].PyID; id != 0 {
				x.dense[id-lo] = trace.Index(i)
			}
		}
		return x
	}
	x.byID = make(map[int64]trace.Index, n)
	for i := range frames {
		if id := frames[i].PyID; id != 0 {
			x.byID[id] = trace.Index(i)
		}
	}
	return x
}

// get returns the last frame with Python id id (as a map filled in order
// would).
func (x frameIndex) get(id int64) (trace.Index, bool) {
	if x.dense != nil {
		if d := uint64(id - x.base); id >= x.base && d < uint64(len(x.dense)) && x.dense[d] != trace.None {
			return x.dense[d], true
		}
		return trace.None, false
	}
	p, ok := x.byID[id]
	return p, ok
}

// steps finds ProfilerStep#N ranges; a trace without them is one step.
func (m *merger) steps() {
	t := m.t
	for _, a := range t.Annotations {
		rest, ok := strings.CutPrefix(a.Name, "ProfilerStep#")
		if !ok || a.GPU {
			continue
		}
		n, err := strconv.Atoi(rest)
		if err != nil {
			continue
		}
		t.Steps = append(t.Steps, trace.Step{Span: a.Span, Number: n})
	}
	slices.SortFunc(t.Steps, func(a, b trace.Step) int { return bySpan(a.Span, b.Span) })
	// A step ends where the next begins: a ProfilerStep range that
	// outlasts the next one's start is cut there, so steps never overlap.
	for i := 1; i < len(t.Steps); i++ {
		if prev := &t.Steps[i-1]; prev.End > t.Steps[i].Start {
			prev.End = max(t.Steps[i].Start, prev.Start)
		}
	}
	if len(t.Steps) == 0 {
		s := t.Span()
		if s.End > s.Start {
			t.Steps = []trace.Step{{Span: trace.Span{Name: "whole trace", Start: s.Start, End: s.End}, Synthetic: true}}
		}
	}
}

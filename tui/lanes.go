package tui

import (
	"fmt"
	"sort"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/trace"
)

// laneKind says what a timeline lane shows, which decides how it is drawn
// and what Enter on it opens.
type laneKind uint8

const (
	laneGPU   laneKind = iota // a GPU stream: kernels, copies, memsets
	laneOps                   // a host thread's framework ops
	lanePy                    // a host thread's Python frames
	laneSteps                 // ProfilerStep#N ranges
	laneRange                 // user record_function ranges on a host thread
)

// lane is one row of the timeline: items sorted by start (host items nest,
// a GPU stream's do not) and the union of their intervals as disjoint
// segments with prefix sums, so the busy time of any column costs two
// binary searches however many items the lane holds.
type lane struct {
	kind  laneKind
	label string // the short label left of the lane
	what  string // the longer name the readout under the lanes uses
	key   string // lower-cased label and name, for the / filter
	// t is the trace the lane's items index; group, in a run, names its
	// rank ("r1"), and own says it is the rank the other screens show.
	t     *trace.Trace
	group string
	own   bool

	n          int
	start, end func(i int) trace.Time
	// describe names item i for the readout; ref is what Enter opens
	// (a GPU activity, an op, a step index) or e reads (a Python
	// frame), or -1.
	describe func(i int) string
	ref      func(i int) int
	// short names item i inside the lane, where room is short (a Python
	// frame's function); nil means describe.
	short func(i int) string
	// parent is the item enclosing item i in the lane, or -1; nil when
	// the lane's items have no parents.
	parent func(i int) int

	segStart, segEnd []trace.Time
	prefix           []trace.Duration // busy time before segment k
	// tops are the items no earlier item contains (the outermost ones).
	tops []int32
	// maxDepth is how deep the lane's items nest (0: flat).
	maxDepth int
}

// index computes the segments, the outermost items and the nesting
// depth.
func (l *lane) index() {
	if l.parent != nil {
		depth := make([]uint16, l.n)
		for i := 0; i < l.n; i++ {
			if p := l.parent(i); p >= 0 && p < i {
				depth[i] = depth[p] + 1
				l.maxDepth = max(l.maxDepth, int(depth[i]))
			}
		}
	}
	l.prefix = append(l.prefix[:0], 0)
	var curEnd trace.Time
	for i := 0; i < l.n; i++ {
		a, b := l.start(i), l.end(i)
		if b < a {
			b = a
		}
		if len(l.tops) == 0 || a >= curEnd {
			l.tops = append(l.tops, int32(i))
		}
		k := len(l.segEnd) - 1
		if k >= 0 && a <= l.segEnd[k] {
			if b > l.segEnd[k] {
				l.prefix[k+1] += trace.Duration(b - l.segEnd[k])
				l.segEnd[k] = b
			}
		} else {
			l.segStart = append(l.segStart, a)
			l.segEnd = append(l.segEnd, b)
			l.prefix = append(l.prefix, l.prefix[len(l.prefix)-1]+trace.Duration(b-a))
		}
		curEnd = max(curEnd, b)
	}
}

// setGroup puts the lane in a rank's group ("r1"): the label column
// names the rank, the readout says "rank 1 …", and "/rank 1" or "/r1"
// filters its lanes.
func (l *lane) setGroup(group string) {
	if group == "" {
		return
	}
	l.group = group
	l.key += "\x00" + group + "\x00rank " + strings.TrimPrefix(group, "r")
	l.what = "rank " + strings.TrimPrefix(group, "r") + " " + l.what
}

// label2 is the name drawn inside the lane for item i.
func (l *lane) label2(i int) string {
	if l.short != nil {
		return l.short(i)
	}
	return l.describe(i)
}

// busyBefore returns how long the lane was busy before time x.
func (l *lane) busyBefore(x trace.Time) trace.Duration {
	k := sort.Search(len(l.segStart), func(i int) bool { return l.segStart[i] >= x })
	b := l.prefix[k]
	if k > 0 && l.segEnd[k-1] > x {
		b -= trace.Duration(l.segEnd[k-1] - x)
	}
	return max(b, 0)
}

// first returns the first item that starts at or after x.
func (l *lane) first(x trace.Time) int {
	return sort.Search(l.n, func(i int) bool { return l.start(i) >= x })
}

// cover returns the innermost item covering time x, or -1. Items are
// sorted by start, so it is the latest-starting one that has not ended by
// x: from the last item starting at or before x, walk out through the
// parents (as deep as the stack, whatever the lane's size), or, on lanes
// without parent links, back through earlier items (bounded; the
// outermost items are searched after that).
func (l *lane) cover(x trace.Time) int {
	i := min(l.first(x+1), l.n) - 1
	if l.parent != nil {
		for i >= 0 && l.end(i) <= x {
			p := l.parent(i)
			if p >= i {
				p = -1 // a malformed link: never loop
			}
			i = p
		}
		return i
	}
	for n := 0; i >= 0 && n < 4096; i, n = i-1, n+1 {
		if l.end(i) > x {
			return i
		}
	}
	k := sort.Search(len(l.tops), func(i int) bool { return l.start(int(l.tops[i])) > x })
	if k > 0 && l.end(int(l.tops[k-1])) > x {
		return int(l.tops[k-1])
	}
	return -1
}

// under returns the item the readout names for the column [a, b): on
// lanes whose items nest, the innermost one covering the column's middle;
// otherwise (or when none covers it) the one overlapping the column most.
// It returns -1 when the lane is idle there.
func (l *lane) under(a, b trace.Time) int {
	if l.kind != laneGPU {
		if i := l.cover(a + (b-a)/2); i >= 0 {
			return i
		}
	}
	best, bestOv := -1, trace.Duration(0)
	for i, n := l.first(b)-1, 0; i >= 0 && n < 4096; i, n = i-1, n+1 {
		if l.kind == laneGPU && l.end(i) <= a {
			break
		}
		ov := trace.Duration(min(l.end(i), b) - max(l.start(i), a))
		if ov > bestOv {
			best, bestOv = i, ov
		}
	}
	return best
}

// style is how the lane's busy columns are coloured.
func (l *lane) style(st *styles) lipgloss.Style {
	switch l.kind {
	case laneGPU:
		return st.gpuLane
	case laneOps:
		return st.opLane
	case lanePy:
		return st.pyLane
	}
	return st.annLane
}

// spans reports whether the lane draws its items as labelled spans
// (steps, ranges: few, long, named) rather than busy density.
func (l *lane) spans() bool { return l.kind == laneSteps || l.kind == laneRange }

// runs calls f for each maximal run [from, to) of t's elements that share
// key, for slices sorted by that key (streams, threads).
func runs(n int, same func(i, j int) bool, f func(from, to int)) {
	for i := 0; i < n; {
		j := i + 1
		for j < n && same(i, j) {
			j++
		}
		f(i, j)
		i = j
	}
}

// buildLanes makes the timeline's lanes of a trace.
func buildLanes(t *trace.Trace) []lane { return lanesOf(t, 0, "", true) }

// lanesOf makes the lanes of t: GPU streams first (what the user tunes),
// then per host thread its ops and Python frames, then the annotation
// lanes (steps, user ranges) that say what the program was in. In a
// run, shift moves t's times onto the shown rank's clock and group names
// the rank; own says t is the trace the other screens show.
func lanesOf(t *trace.Trace, shift trace.Duration, group string, own bool) []lane {
	var ls []lane
	add := func(l lane) {
		if l.n == 0 {
			return
		}
		l.t, l.own = t, own
		l.key = strings.ToLower(l.label + "\x00" + l.what)
		l.setGroup(group)
		if shift != 0 {
			start, end := l.start, l.end
			l.start = func(i int) trace.Time { return start(i) + trace.Time(shift) }
			l.end = func(i int) trace.Time { return end(i) + trace.Time(shift) }
		}
		l.index()
		ls = append(ls, l)
	}
	gpuLanes(t, add)
	hostLanes(t, add)
	return ls
}

// gpuLanes adds a lane per GPU stream, each followed by its GPU-side
// ranges.
func gpuLanes(t *trace.Trace, add func(lane)) {
	// GPU-side ranges (gpu_user_annotation: the step and the optimizer
	// as the stream ran them) go right under their stream.
	type stream struct{ device, stream int32 }
	gpuRanges := map[stream][]int32{}
	for i := range t.GPUAnnotations {
		a := &t.GPUAnnotations[i]
		k := stream{a.Device, a.Stream}
		gpuRanges[k] = append(gpuRanges[k], int32(i))
	}
	runs(len(t.GPU), func(i, j int) bool {
		return t.GPU[i].Device == t.GPU[j].Device && t.GPU[i].Stream == t.GPU[j].Stream
	}, func(from, to int) {
		g := t.GPU[from:to]
		add(lane{kind: laneGPU, label: fmt.Sprintf("gpu%d s%d", g[0].Device, g[0].Stream),
			what: fmt.Sprintf("GPU %d stream %d", g[0].Device, g[0].Stream), n: len(g),
			start: func(i int) trace.Time { return g[i].Start }, end: func(i int) trace.Time { return g[i].End },
			describe: func(i int) string { return gpuName(&g[i]) }, ref: func(i int) int { return from + i }})
		if ix := gpuRanges[stream{g[0].Device, g[0].Stream}]; len(ix) > 0 {
			add(rangeLane(t.GPUAnnotations, ix, fmt.Sprintf("s%d ranges", g[0].Stream), fmt.Sprintf("ranges on GPU %d stream %d", g[0].Device, g[0].Stream)))
		}
	})
}

// hostLanes adds per host thread its ops and Python frames, then the
// annotation lanes: steps, and user ranges per thread.
func hostLanes(t *trace.Trace, add func(lane)) {
	// Host lanes are numbered by thread in trace order; the readout names
	// the thread as the trace does.
	threadNo := map[trace.Index]int{}
	threadLabel := func(th trace.Index) (int, string) {
		n, ok := threadNo[th]
		if !ok {
			n = len(threadNo) + 1
			threadNo[th] = n
		}
		name := "thread"
		if int(th) >= 0 && int(th) < len(t.Threads) {
			tt := &t.Threads[th]
			name = sanitize(strings.TrimSpace(tt.Name + " " + tt.TID))
		}
		return n, name
	}
	type hostLane struct {
		thread trace.Index
		l      lane
	}
	var host []hostLane
	runs(len(t.Ops), func(i, j int) bool { return t.Ops[i].Thread == t.Ops[j].Thread }, func(from, to int) {
		o := t.Ops[from:to]
		n, name := threadLabel(o[0].Thread)
		host = append(host, hostLane{o[0].Thread, lane{kind: laneOps, label: fmt.Sprintf("cpu%d ops", n), what: "ops on " + name, n: len(o),
			start: func(i int) trace.Time { return o[i].Start }, end: func(i int) trace.Time { return o[i].End },
			describe: func(i int) string { return opPathText(t, trace.Index(from+i)) }, ref: func(i int) int { return from + i },
			short:  func(i int) string { return sanitize(o[i].Name) },
			parent: func(i int) int { return localParent(o[i].Parent, from, len(o)) }}})
	})
	runs(len(t.Frames), func(i, j int) bool { return t.Frames[i].Thread == t.Frames[j].Thread }, func(from, to int) {
		f := t.Frames[from:to]
		n, name := threadLabel(f[0].Thread)
		host = append(host, hostLane{f[0].Thread, lane{kind: lanePy, label: fmt.Sprintf("cpu%d py", n), what: "Python on " + name, n: len(f),
			start: func(i int) trace.Time { return f[i].Start }, end: func(i int) trace.Time { return f[i].End },
			describe: func(i int) string { return frameStackText(t, trace.Index(from+i)) }, ref: func(i int) int { return from + i },
			short:  func(i int) string { _, _, fn, _ := trace.ParseFrameName(f[i].Name); return sanitize(fn) },
			parent: func(i int) int { return localParent(f[i].Parent, from, len(f)) }}})
	})
	// A thread's ops lane sits above its Python lane.
	sort.SliceStable(host, func(a, b int) bool {
		na, nb := threadNo[host[a].thread], threadNo[host[b].thread]
		return na < nb || na == nb && host[a].l.kind < host[b].l.kind
	})
	for _, h := range host {
		add(h.l)
	}
	if len(t.Steps) > 0 && !t.Steps[0].Synthetic {
		s := t.Steps
		add(lane{kind: laneSteps, label: "steps", what: "steps", n: len(s),
			start: func(i int) trace.Time { return s[i].Start }, end: func(i int) trace.Time { return s[i].End },
			describe: func(i int) string { return fmt.Sprintf("step #%d (%s)", s[i].Number, s[i].Dur()) }, ref: func(i int) int { return i }})
	}
	// User ranges: host annotations other than the step markers, one lane
	// per thread that has any.
	var idx []int32
	flush := func() {
		if len(idx) == 0 {
			return
		}
		n, name := threadLabel(t.Annotations[idx[0]].Thread)
		add(rangeLane(t.Annotations, idx, fmt.Sprintf("cpu%d ranges", n), "ranges on "+name))
		idx = nil
	}
	for i := range t.Annotations {
		a := &t.Annotations[i]
		if len(idx) > 0 && t.Annotations[idx[0]].Thread != a.Thread {
			flush()
		}
		if !strings.HasPrefix(a.Name, "ProfilerStep#") {
			idx = append(idx, int32(i))
		}
	}
	flush()
}

// localParent turns a parent link into an index within the lane that
// holds the trace's items [from, from+n), or -1.
func localParent(p trace.Index, from, n int) int {
	if q := int(p) - from; p != trace.None && q >= 0 && q < n {
		return q
	}
	return -1
}

// rangeLane is a lane of the annotations ix of as (sorted by start).
func rangeLane(as []trace.Annotation, ix []int32, label, what string) lane {
	return lane{kind: laneRange, label: label, what: what, n: len(ix),
		start:    func(i int) trace.Time { return as[ix[i]].Start },
		end:      func(i int) trace.Time { return as[ix[i]].End },
		describe: func(i int) string { return sanitize(as[ix[i]].Name) }, ref: func(int) int { return -1 }}
}

// gpuName names a GPU activity: a kernel's short name, or the copy kind.
func gpuName(a *trace.GPUActivity) string {
	switch a.Kind {
	case trace.Kernel:
		return sanitize(analyze.ShortKernelName(a.Name))
	case trace.Memset:
		return "memset"
	}
	return a.Kind.String() + " " + a.Copy.String()
}

// opPathText is an op with the ops around it, outermost first.
func opPathText(t *trace.Trace, op trace.Index) string {
	var names []string
	for _, o := range t.OpPath(op) {
		names = append(names, sanitize(t.Ops[o].Name))
	}
	return strings.Join(names, " › ")
}

// frameStackText is a Python frame with its callers, outermost first,
// the last three (the user's code is usually near the top of the stack).
func frameStackText(t *trace.Trace, f trace.Index) string {
	st := t.FrameStack(f)
	if len(st) > 3 {
		st = st[:3]
	}
	names := make([]string, len(st))
	for i, fr := range st {
		names[len(st)-1-i] = sanitize(t.Frames[fr].Name)
	}
	return strings.Join(names, " › ")
}

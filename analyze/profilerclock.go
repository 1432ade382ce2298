package analyze

import (
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/trace"
)

// profilerClock prices the profiler's own host work in any interval of a
// torch.profiler trace: the events it recorded there, each at its
// option's cost (OverheadPerOpUs, OverheadPerShapesOpUs,
// OverheadPerFrameUs, OverheadPerMemoryEventUs; a DataLoader's loading
// ops at OverheadPerLoaderOpUs). The saving models use it
// to say what a host interval (a sync's refill, the host's lead on the
// GPU) takes in the untraced program.
type profilerClock struct {
	// ops holds the starts of framework ops and host record_function
	// ranges (startLists: the ops' may be the HostTable's start column,
	// shared and only read), loader those of the ops inside a
	// DataLoader's ranges (loaderRanges; not in ops), frames of Python
	// frame events, memory of allocator events, each sorted.
	ops                    startLists
	loader, frames, memory []trace.Time
	// sortedFrames are the trace's frames when they come sorted by start
	// (the HostTable's frames.sorted), counted in place, and frameEvery
	// every frameStride-th one's start (the HostTable's); frames is nil
	// then.
	sortedFrames []trace.PyFrame
	frameEvery   []trace.Time
	// perOpUs is the cost of one recorded op with the trace's options
	// (record_shapes adds OverheadPerShapesOpUs).
	perOpUs float64
	// work is the program's own work the trace shows (leaf ops): no
	// profiler cost lies inside it, which bounds the per-event estimate.
	// Built on first use (leafWorkIn): a pass that prices no interval
	// does not pay for it (~1.5 ms on a trace of 30 k ops). The clock is
	// a fact the analyzers share side by side: workOnce builds it once.
	work     *leafWork
	workOnce sync.Once
	trace    *trace.Trace
	host     *hostTable
}

// newProfilerClock returns t's clock (host: t's HostTable), or nil when
// the per-event costs do not apply: they were measured on torch.profiler
// traces only (another profiler's cost per event is unknown).
func newProfilerClock(t *trace.Trace, host *hostTable) *profilerClock {
	if t.Meta.Framework != "PyTorch" {
		return nil
	}
	c := &profilerClock{perOpUs: OverheadPerOpUs, trace: t, host: host}
	// Independent sorts of up to millions of times (none where the
	// events come sorted), and the leaf work (every analyzer that prices
	// an interval reads it), side by side: the clock is on the way of
	// the analyzers that need it.
	var wg sync.WaitGroup
	wg.Go(func() { c.ops, c.loader = opStarts(t, host) })
	wg.Go(func() { c.memory = sortedStarts(len(t.Memory), func(i int) trace.Time { return t.Memory[i].At }) })
	if host.frames.sorted {
		c.sortedFrames, c.frameEvery = t.Frames, host.frameEvery
	} else {
		wg.Go(func() { c.frames = sortedStarts(len(t.Frames), func(i int) trace.Time { return t.Frames[i].Start }) })
	}
	if len(t.Ops) > 0 {
		wg.Go(func() {
			w := newLeafWork(t, host)
			c.work = &w
		})
	}
	if slices.Contains(profilerOptions(t), "record_shapes") {
		c.perOpUs += OverheadPerShapesOpUs
	}
	wg.Wait()
	return c
}

// opStarts returns the sorted starts of the framework ops and host
// ranges outside a DataLoader's loading ranges, and of those inside. The
// ops' starts are read from their column (host), in chunks side by side
// (a sorted list of times does not depend on the order they were
// gathered in); a column that comes sorted with no loading range is
// counted in place, the ranges' starts in a list of their own (a count
// over two sorted lists is the count over their merge).
func opStarts(t *trace.Trace, host *hostTable) (ops startLists, loader []trace.Time) {
	loading := loaderRanges(t)
	starts := host.ops.start
	var own []trace.Time
	switch {
	case len(loading) == 0 && host.ops.sorted:
		ops = append(ops, starts)
	case len(loading) == 0:
		own = make([]trace.Time, len(starts), len(starts)+len(t.Annotations))
		copy(own, starts)
	default:
		own = make([]trace.Time, 0, len(starts)+len(t.Annotations))
		for _, part := range mapChunks(len(starts), func(lo, hi int) (p [2][]trace.Time) {
			for _, at := range starts[lo:hi] {
				if overlapsAny(trace.Span{Start: at, End: at + 1}, loading) {
					p[1] = append(p[1], at)
				} else {
					p[0] = append(p[0], at)
				}
			}
			return p
		}) {
			own, loader = append(own, part[0]...), append(loader, part[1]...)
		}
	}
	for i := range t.Annotations {
		if !t.Annotations[i].GPU {
			own = append(own, t.Annotations[i].Start)
		}
	}
	sortTimes(own)
	sortTimes(loader)
	return append(ops, own), loader
}

// startLists are sorted lists of event starts, counted as one.
type startLists [][]trace.Time

// count returns the starts in [a, b).
func (l startLists) count(a, b trace.Time) int {
	n := 0
	for _, v := range l {
		n += countIn(v, a, b)
	}
	return n
}

// loaderRanges are the host ranges a DataLoader records around each
// batch it loads in the training process (enumerate(DataLoader)#...), as
// a sorted union: the ops in them are the loading process's.
func loaderRanges(t *trace.Trace) []trace.Span {
	var v []trace.Span
	for i := range t.Annotations {
		if a := &t.Annotations[i]; !a.GPU && strings.Contains(strings.ToLower(a.Name), "dataloader") {
			v = append(v, a.Span)
		}
	}
	return interval.Union(v)
}

// counts returns the ops (other than loading ops), loading ops, frames
// and allocator events recorded in [a, b).
func (c *profilerClock) counts(a, b trace.Time) (ops, loader, frames, memory int) {
	return c.ops.count(a, b), countIn(c.loader, a, b), c.framesIn(a, b), countIn(c.memory, a, b)
}

// framesIn returns the frames that start in [a, b): in the sorted
// starts, or in the frames themselves when they come sorted.
func (c *profilerClock) framesIn(a, b trace.Time) int {
	if c.sortedFrames == nil {
		return countIn(c.frames, a, b)
	}
	return c.firstFrameFrom(b) - c.firstFrameFrom(a)
}

// firstFrameFrom returns the first of the sorted frames starting at or
// after at: among frameEvery's starts, then among the frameStride
// frames before the one found there.
func (c *profilerClock) firstFrameFrom(at trace.Time) int {
	k, _ := slices.BinarySearch(c.frameEvery, at)
	return c.frameFromSample(k, at)
}

// frameFromSample is firstFrameFrom's answer given k, the first of
// frameEvery's starts at or after at.
func (c *profilerClock) frameFromSample(k int, at trace.Time) int {
	// Frame k*frameStride starts at or after at (or is past the last),
	// frame (k-1)*frameStride before it.
	lo, hi := max((k-1)*frameStride+1, 0), min(k*frameStride, len(c.sortedFrames))
	f := c.sortedFrames[lo:hi]
	return lo + sort.Search(len(f), func(i int) bool { return f[i].Start >= at })
}

// costUs is the profiler's estimated host work in [a, b), in µs
// (eventsIn). A nil clock costs nothing.
func (c *profilerClock) costUs(a, b trace.Time) float64 {
	if c == nil || b <= a {
		return 0
	}
	ops, loader, frames, memory := c.counts(a, b)
	return c.eventsIn(a, b, float64(ops), float64(loader), float64(frames), float64(memory))
}

// leafWorkIn is the leaf-op work in [a, b) (leafWork), built on first
// use.
func (c *profilerClock) leafWorkIn(a, b trace.Time) trace.Duration {
	c.workOnce.Do(func() {
		if c.work == nil {
			w := newLeafWork(c.trace, c.host)
			c.work = &w
		}
	})
	return c.work.in(a, b)
}

// eventsIn prices ops, loading ops, frames and allocator events recorded
// in [a, b): the ops' and frames' cost at most the interval's time
// outside leaf-op work (leafWork), where the profiler records them; the
// allocator events' on top (they are recorded inside the ops that
// allocate, leaf ops among them); the whole at most the interval.
func (c *profilerClock) eventsIn(a, b trace.Time, ops, loader, frames, memory float64) float64 {
	span := trace.Duration(b - a)
	outside := us(span - c.leafWorkIn(a, b))
	recorded := min(c.perOpUs*ops+OverheadPerLoaderOpUs*loader+OverheadPerFrameUs*frames, outside)
	return min(recorded+OverheadPerMemoryEventUs*memory, us(span))
}

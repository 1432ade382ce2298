package analyze

import (
	"slices"
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
	// ranges, loader those of the ops inside a DataLoader's ranges
	// (loaderRanges; not in ops), frames of Python frame events, memory
	// of allocator events, each sorted (frames: the HostTable's, shared
	// and only read).
	ops, loader, frames, memory []trace.Time
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
	c := &profilerClock{perOpUs: OverheadPerOpUs, trace: t, host: host, frames: host.frameStarts}
	// Two independent sorts of up to millions of times (the frames'
	// came sorted with the HostTable), and the leaf work (every analyzer
	// that prices an interval reads it), side by side: the clock is on
	// the way of the analyzers that need it.
	var wg sync.WaitGroup
	wg.Go(func() { c.ops, c.loader = opStarts(t, host) })
	wg.Go(func() { c.memory = sortedStarts(len(t.Memory), func(i int) trace.Time { return t.Memory[i].At }) })
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
// gathered in).
func opStarts(t *trace.Trace, host *hostTable) (ops, loader []trace.Time) {
	loading := loaderRanges(t)
	starts := host.ops.start
	if len(loading) == 0 {
		ops = make([]trace.Time, len(starts), len(starts)+len(t.Annotations))
		copy(ops, starts)
	} else {
		ops = make([]trace.Time, 0, len(starts)+len(t.Annotations))
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
			ops, loader = append(ops, part[0]...), append(loader, part[1]...)
		}
	}
	for i := range t.Annotations {
		if !t.Annotations[i].GPU {
			ops = append(ops, t.Annotations[i].Start)
		}
	}
	sortTimes(ops)
	sortTimes(loader)
	return ops, loader
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
	return countIn(c.ops, a, b), countIn(c.loader, a, b), countIn(c.frames, a, b), countIn(c.memory, a, b)
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

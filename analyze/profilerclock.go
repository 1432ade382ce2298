package analyze

import (
	"slices"

	"github.com/tracelens/tracelens/trace"
)

// profilerClock prices the profiler's own host work in any interval of a
// torch.profiler trace: the events it recorded there, each at its
// option's cost (OverheadPerOpUs, OverheadPerShapesOpUs,
// OverheadPerFrameUs, OverheadPerMemoryEventUs). The saving models use it
// to say what a host interval (a sync's refill, the host's lead on the
// GPU) takes in the untraced program.
type profilerClock struct {
	// ops holds the starts of framework ops and host record_function
	// ranges, frames of Python frame events, memory of allocator events,
	// each sorted.
	ops, frames, memory []trace.Time
	// perOpUs is the cost of one recorded op with the trace's options
	// (record_shapes adds OverheadPerShapesOpUs).
	perOpUs float64
	// work is the program's own work the trace shows (leaf ops): no
	// profiler cost lies inside it, which bounds the per-event estimate.
	work leafWork
}

// newProfilerClock returns t's clock, or nil when the per-event costs do
// not apply: they were measured on torch.profiler traces only (another
// profiler's cost per event is unknown).
func newProfilerClock(t *trace.Trace) *profilerClock {
	if t.Meta.Framework != "PyTorch" {
		return nil
	}
	c := &profilerClock{perOpUs: OverheadPerOpUs}
	c.ops = sortedStarts(len(t.Ops), func(i int) trace.Time { return t.Ops[i].Start })
	for i := range t.Annotations {
		if !t.Annotations[i].GPU {
			c.ops = append(c.ops, t.Annotations[i].Start)
		}
	}
	slices.Sort(c.ops)
	c.frames = sortedStarts(len(t.Frames), func(i int) trace.Time { return t.Frames[i].Start })
	c.memory = sortedStarts(len(t.Memory), func(i int) trace.Time { return t.Memory[i].At })
	if slices.Contains(profilerOptions(t), "record_shapes") {
		c.perOpUs += OverheadPerShapesOpUs
	}
	c.work = newLeafWork(t)
	return c
}

// counts returns the ops, frames and allocator events recorded in [a, b).
func (c *profilerClock) counts(a, b trace.Time) (ops, frames, memory int) {
	return countIn(c.ops, a, b), countIn(c.frames, a, b), countIn(c.memory, a, b)
}

// costUs is the profiler's estimated host work in [a, b), in µs
// (eventsIn). A nil clock costs nothing.
func (c *profilerClock) costUs(a, b trace.Time) float64 {
	if c == nil || b <= a {
		return 0
	}
	ops, frames, memory := c.counts(a, b)
	return c.eventsIn(a, b, float64(ops), float64(frames), float64(memory))
}

// eventsIn prices ops, frames and allocator events recorded in [a, b):
// the ops' and frames' cost at most the interval's time outside leaf-op
// work (leafWork), where the profiler records them; the allocator events'
// on top (they are recorded inside the ops that allocate, leaf ops
// among them); the whole at most the interval.
func (c *profilerClock) eventsIn(a, b trace.Time, ops, frames, memory float64) float64 {
	span := trace.Duration(b - a)
	outside := us(span - c.work.in(a, b))
	recorded := min(c.perOpUs*ops+OverheadPerFrameUs*frames, outside)
	return min(recorded+OverheadPerMemoryEventUs*memory, us(span))
}

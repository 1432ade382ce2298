package analyze

import (
	"sort"

	"github.com/tracelens/tracelens/trace"
)

// criticalInOrder fills the critical times of a model sorted by device,
// stream and start in one pass, or returns false when it is not sorted
// (checked as it goes). The grouping of newCritical's streams read the
// model three times before their pass (its order, the streams' bounds,
// the devices with launch records), each pass 128 bytes an activity; the
// sync calls were searched from the start for every activity. Here each
// stream is the stretch of the model it is in, the next activity on it
// the next in the model, and the syncs are walked forward with its
// starts. Each activity is priced as on a device with launch records; a
// device found to have none is priced again, each activity in full (what
// the stream pass gives it). The launch calls' ends are read from their
// columns (calls).
func criticalInOrder(t *trace.Trace, calls *callColumns, syncs []trace.Span) (*CriticalFacts, bool) {
	gpu := t.GPU
	c := &CriticalFacts{crit: make([]uint32, len(gpu))}
	dev, launched := 0, false // the device's first activity; whether it has a launch record
	j := 0                    // the first sync ending at or after the activity's start
	for g := range gpu {
		a := &gpu[g]
		if g > 0 {
			p := &gpu[g-1]
			if a.Device != p.Device || a.Stream != p.Stream {
				if a.Device < p.Device || a.Device == p.Device && a.Stream < p.Stream {
					return nil, false
				}
				j = 0
			} else if a.Start < p.Start {
				return nil, false
			}
			if a.Device != p.Device {
				c.inFull(gpu, dev, g, launched)
				dev, launched = g, false
			}
		}
		launched = launched || a.Launch != trace.None
		if a.End <= a.Start {
			continue
		}
		dur := trace.Duration(a.End - a.Start)
		var crit trace.Duration
		if g+1 < len(gpu) {
			next := &gpu[g+1]
			if next.Device == a.Device && next.Stream == a.Stream && next.Start <= a.End+trace.Time(queuedSlack) && next.Launch != trace.None {
				// Queued when its launch call returned, or when it
				// started if that was earlier (clock alignment).
				q := min(calls.end[next.Launch], next.Start)
				if q < a.End {
					crit = trace.Duration(a.End - max(q, a.Start))
				}
			}
		}
		j = firstEndingFrom(syncs, j, a.Start)
		crit = max(crit, overlapFrom(syncs, j, a.Span))
		if a.Launch != trace.None && a.Kind == trace.Memcpy && (a.Src == trace.Pageable || a.Dst == trace.Pageable) {
			// A copy from or to pageable memory is synchronous: its
			// own launch call holds the host until it is done.
			crit = max(crit, overlap([]trace.Span{calls.span(a.Launch)}, a.Span))
		}
		c.set(g, min(crit, dur))
	}
	c.inFull(gpu, dev, len(gpu), launched)
	return c, true
}

// inFull prices the activities [lo, hi) of one device in full when the
// device has no launch records (launched false): nothing tells the host
// was late.
func (c *CriticalFacts) inFull(gpu []trace.GPUActivity, lo, hi int, launched bool) {
	if launched {
		return
	}
	for g := lo; g < hi; g++ {
		if a := &gpu[g]; a.End > a.Start {
			c.set(g, trace.Duration(a.End-a.Start))
		}
	}
}

// firstEndingFrom returns the first of the sorted disjoint spans ending
// at or after at, searched forward from j (which must not be past it):
// a gallop, then a binary search over the last stride.
func firstEndingFrom(spans []trace.Span, j int, at trace.Time) int {
	if j >= len(spans) || spans[j].End >= at {
		return j
	}
	lo, step := j, 1 // spans[lo] ends before at
	for lo+step < len(spans) && spans[lo+step].End < at {
		lo += step
		step *= 2
	}
	hi := min(lo+step, len(spans))
	return lo + 1 + sort.Search(hi-lo-1, func(k int) bool { return spans[lo+1+k].End >= at })
}

// overlapFrom is overlap(spans, a) where spans[j] is the first span
// ending at or after a's start (firstEndingFrom): no search.
func overlapFrom(spans []trace.Span, j int, a trace.Span) trace.Duration {
	var d trace.Duration
	for ; j < len(spans) && spans[j].Start < a.End; j++ {
		if e, s := min(spans[j].End, a.End), max(spans[j].Start, a.Start); e > s {
			d += trace.Duration(e - s)
		}
	}
	return d
}

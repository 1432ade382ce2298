package analyze

import (
	"slices"

	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/trace"
)

// The GPU busy unions (IdleGaps, the compute/communication split) are
// merged from the activities where they lie. The model keeps each
// device's activities sorted by stream, then start, so a device is a few
// runs of non-decreasing starts (one per stream): merging those runs
// visits every activity in start order, and the union is the one
// interval.Union gives (it depends only on that order), without first
// copying a device's spans into a slice to sort. That copy was 32 bytes
// an activity, the largest transient set of the facts (issue 27).

// gpuRun is a stretch [lo, hi) of the trace's GPU activities, on one
// device, whose starts do not decrease.
type gpuRun struct{ lo, hi int }

// deviceRuns returns, per device, the stretches of gpu whose starts do
// not decrease: one per stream in a model (which is sorted by device,
// stream, start); more where activities are out of order, which the
// merge then puts in order.
func deviceRuns(gpu []trace.GPUActivity) map[int32][]gpuRun {
	runs := map[int32][]gpuRun{}
	for lo := 0; lo < len(gpu); {
		dev := gpu[lo].Device
		hi := lo + 1
		for hi < len(gpu) && gpu[hi].Device == dev && gpu[hi].Start >= gpu[hi-1].Start {
			hi++
		}
		runs[dev] = append(runs[dev], gpuRun{lo, hi})
		lo = hi
	}
	return runs
}

// mergeRuns calls emit with the union of the intervals of the activities
// in runs for which keep is true (every one when keep is nil), in order:
// interval.Union's merge (overlapping and touching intervals join, an
// empty one alone is kept as a point) over the runs merged by start.
func mergeRuns(gpu []trace.GPUActivity, runs []gpuRun, keep func(g int) bool, emit func(interval.Bounds)) {
	h := runHeap{gpu: gpu, keep: keep}
	for _, r := range runs {
		h.push(r)
	}
	var cur interval.Bounds
	open := false
	for len(h.runs) > 0 {
		a := &gpu[h.runs[0].lo]
		switch {
		case open && a.Start <= cur.End:
			cur.End = max(cur.End, a.End)
		case open:
			emit(cur)
			fallthrough
		default:
			cur, open = interval.Bounds{Start: a.Start, End: a.End}, true
		}
		h.next()
	}
	if open {
		emit(cur)
	}
}

// unionRuns is mergeRuns collected: at most n intervals (the activities
// kept), in a slice of its own size.
func unionRuns(gpu []trace.GPUActivity, runs []gpuRun, keep func(g int) bool, n int) []interval.Bounds {
	out := make([]interval.Bounds, 0, n)
	mergeRuns(gpu, runs, keep, func(b interval.Bounds) { out = append(out, b) })
	if cap(out)-len(out) > len(out)/8 {
		// Overlapping streams merged: not kept at the size of every
		// activity for as long as the facts live.
		out = slices.Clone(out)
	}
	return out
}

// runHeap holds the runs not yet merged, each at its next kept activity,
// as a min-heap by that activity's start.
type runHeap struct {
	gpu  []trace.GPUActivity
	keep func(g int) bool
	runs []gpuRun
}

// skip moves r past the activities keep rejects; false when none is left.
func (h *runHeap) skip(r *gpuRun) bool {
	for h.keep != nil && r.lo < r.hi && !h.keep(r.lo) {
		r.lo++
	}
	return r.lo < r.hi
}

// push adds run r (at its first kept activity), unless it keeps none.
func (h *runHeap) push(r gpuRun) {
	if !h.skip(&r) {
		return
	}
	h.runs = append(h.runs, r)
	for i := len(h.runs) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h.runs[i], h.runs[p] = h.runs[p], h.runs[i]
		i = p
	}
}

// next advances the first run past its activity, dropping it when done.
func (h *runHeap) next() {
	r := &h.runs[0]
	r.lo++
	if !h.skip(r) {
		last := len(h.runs) - 1
		h.runs[0] = h.runs[last]
		h.runs = h.runs[:last]
	}
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(h.runs) && h.less(l, m) {
			m = l
		}
		if l+1 < len(h.runs) && h.less(l+1, m) {
			m = l + 1
		}
		if m == i {
			return
		}
		h.runs[i], h.runs[m] = h.runs[m], h.runs[i]
		i = m
	}
}

// less orders runs by their next activity's start.
func (h *runHeap) less(i, j int) bool {
	return h.gpu[h.runs[i].lo].Start < h.gpu[h.runs[j].lo].Start
}

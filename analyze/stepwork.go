package analyze

import (
	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/trace"
)

// stepWork is the GPU work one step launched: per device, the merged
// intervals of the activities the Steps fact assigns to it (by their
// launch call), and where that work lies on the GPU. Asynchronous steps
// and CUDA-graph replays run their work after the host has moved on: the
// host's step window would show the previous step's work and miss its
// own, so a step's GPU figures come from the work it launched.
type stepWork struct {
	// busyUs is the step's GPU busy time summed over the devices;
	// launchGapUs and longGapUs its idle gaps, shorter than LaunchGap and
	// not. They are measured as each step's work is merged, not kept as
	// intervals: a step's merged work for every step at once was the
	// analysis's largest transient set (51 MB at 1 M kernels, issue 27).
	busyUs, launchGapUs, longGapUs float64
	// own lists the GPU activities the step launched (the Steps fact's),
	// ascending; the ledger reads them too.
	own []trace.Index
	// computeUs and commUs split busy into non-communication and
	// communication kernels' unions (summed over devices).
	computeUs, commUs float64
	first, last       trace.Time
	has               bool
	// launchedFirst is the earliest start of the step's non-empty
	// activities that have a launch call (launched says there is one):
	// what the step's GPU period starts from (stepPeriods), found in this
	// pass over the step's activities, not one of its own over them all.
	launchedFirst trace.Time
	launched      bool
	window        trace.Span
	spanDuration  trace.Duration
	// irreducible is the GPU work (µs) no fix removes: the largest
	// kernel's time inside the window at the most a fix speeds it up.
	irreducible float64
}

// stepWorks returns each step's work and window: the host's step window
// (slid later when the GPU ran the step's work late), or the extent of
// the GPU work the step launched when that is longer (the GPU, not the
// host, sets the pace then). Every busy interval is
// clipped to the window, so busy ≤ window × devices: a step's busy share
// is within 0–100 % by construction.
func (ix *index) stepWorks(device string) []stepWork {
	t := ix.t
	fastest := maxSpeedup(PeakFor(device))
	ws := make([]stepWork, len(t.Steps))
	per := ix.stepActivities()
	sc := newWorkScratch(ix.devices)
	for i, st := range t.Steps {
		w := &ws[i]
		w.own = per[i]
		w.window = trace.Span{Start: st.Start, End: st.End}
		sc.reset()
		for _, g := range per[i] {
			a := &t.GPU[g]
			if a.End <= a.Start {
				continue
			}
			d := sc.dev(a.Device)
			b := interval.Bounds{Start: a.Start, End: a.End}
			sc.byDev[d] = append(sc.byDev[d], b)
			if ix.category(int(g)) == CategoryCommunication {
				sc.comm[d] = append(sc.comm[d], b)
			} else {
				sc.comp[d] = append(sc.comp[d], b)
			}
			if !w.has || a.Start < w.first {
				w.first = a.Start
			}
			if !w.has || a.End > w.last {
				w.last = a.End
			}
			w.has = true
			if a.Launch != trace.None && (!w.launched || a.Start < w.launchedFirst) {
				w.launchedFirst, w.launched = a.Start, true
			}
		}
		switch {
		case w.has && w.last-w.first > st.End-st.Start:
			w.window = trace.Span{Start: w.first, End: w.last}
		case w.has && w.last > st.End:
			// The work fits in the step's duration but the GPU ran it
			// late (its queue still held earlier work): the step's
			// window, slid later just enough to hold it.
			d := w.last - st.End
			w.window = trace.Span{Start: st.Start + d, End: w.last}
		}
		w.spanDuration = trace.Duration(w.window.End - w.window.Start)
		w.irreducible = ix.irreducible(per[i], w.window, fastest)
		for d := range sc.comp {
			w.computeUs += us(boundsDuration(clipBounds(interval.UnionBounds(sc.comp[d]), w.window)))
			w.commUs += us(boundsDuration(clipBounds(interval.UnionBounds(sc.comm[d]), w.window)))
		}
		ix.measureBusy(w, sc.byDev)
	}
	return ws
}

// irreducible is the GPU work (µs) of activities own that no fix
// removes: the largest kernel's time inside window at the most a fix
// speeds it up (fastest for a tensor-core kernel).
func (ix *index) irreducible(own []trace.Index, window trace.Span, fastest float64) float64 {
	t := ix.t
	var most float64
	for _, g := range own {
		if a := &t.GPU[g]; a.Kind == trace.Kernel {
			clip := trace.Span{Start: max(a.Start, window.Start), End: min(a.End, window.End)}
			d := clip.Dur()
			if ix.category(int(g)) == CategoryCommunication {
				// A collective spinning for a later rank is waiting
				// (spinAsWaiting), not work that remains.
				d -= ix.peerWaitIn(clip)
			}
			if d > 0 {
				most = max(most, us(d)/kernelSpeedup(ix.category(int(g)), fastest))
			}
		}
	}
	return most
}

// workScratch is the storage stepWorks reuses from step to step: each
// step's work per device, all of it and its compute and communication
// parts, indexed by the device's position in the index's devices. A
// step's intervals are garbage once its figures are summed, and made
// afresh per step they were 290 MB of allocation at 1 M kernels, garbage
// the collector chased under the analysis's soft limit (issue 27).
type workScratch struct {
	pos     map[int32]int
	lastDev int32
	lastPos int
	// Bounds, not Spans: the activities' names are not read, and the
	// union's sort moves two thirds of the bytes.
	byDev, comp, comm [][]interval.Bounds
}

// newWorkScratch returns the scratch of a trace whose devices are devs.
func newWorkScratch(devs []int32) *workScratch {
	sc := &workScratch{pos: make(map[int32]int, len(devs)), lastPos: -1}
	for i, d := range devs {
		sc.pos[d] = i
	}
	sc.byDev = make([][]interval.Bounds, len(devs))
	sc.comp = make([][]interval.Bounds, len(devs))
	sc.comm = make([][]interval.Bounds, len(devs))
	return sc
}

// reset empties every device's intervals, keeping their storage.
func (sc *workScratch) reset() {
	for d := range sc.byDev {
		sc.byDev[d], sc.comp[d], sc.comm[d] = sc.byDev[d][:0], sc.comp[d][:0], sc.comm[d][:0]
	}
}

// dev returns device id's position (a step's activities run mostly on
// one device: the last answer is kept).
func (sc *workScratch) dev(id int32) int {
	if sc.lastPos < 0 || id != sc.lastDev {
		sc.lastDev, sc.lastPos = id, sc.pos[id]
	}
	return sc.lastPos
}

// stepActivities returns, per step, the GPU activities the Steps fact
// puts in it, ascending: slices of one array, counted first, where a
// slice appended per step held up to twice its activities (issue 27).
func (ix *index) stepActivities() [][]trace.Index {
	n := make([]int, len(ix.t.Steps)+1)
	for _, st := range ix.gpuStep {
		if st >= 0 {
			n[st+1]++
		}
	}
	for i := 1; i < len(n); i++ {
		n[i] += n[i-1]
	}
	flat := make([]trace.Index, n[len(n)-1])
	per := make([][]trace.Index, len(ix.t.Steps))
	for i := range per {
		per[i] = flat[n[i]:n[i]:n[i+1]]
	}
	for g, st := range ix.gpuStep {
		if st >= 0 {
			per[st] = append(per[st], trace.Index(g))
		}
	}
	return per
}

// measureBusy fills w's busy and gap times from its work per device
// (byDev, in the order of the index's devices; merged here, in place),
// summed in device order as the step's figures always were.
func (ix *index) measureBusy(w *stepWork, byDev [][]interval.Bounds) {
	for d := range ix.devices {
		busy := clipBounds(interval.UnionBounds(byDev[d]), w.window)
		w.busyUs += us(boundsDuration(busy))
		// The gaps busy leaves in the window, the leading and trailing
		// ones included, summed as they are found.
		cur := w.window.Start
		for _, s := range busy {
			if s.Start > cur {
				w.addGap(trace.Duration(s.Start - cur))
			}
			cur = max(cur, s.End)
		}
		if cur < w.window.End {
			w.addGap(trace.Duration(w.window.End - cur))
		}
	}
}

// addGap counts an idle gap of length d as a launch gap or a long one.
func (w *stepWork) addGap(d trace.Duration) {
	if d < LaunchGap {
		w.launchGapUs += us(d)
	} else {
		w.longGapUs += us(d)
	}
}

// boundsDuration is the total length of disjoint bounds.
func boundsDuration(bounds []interval.Bounds) trace.Duration {
	var d trace.Duration
	for _, s := range bounds {
		d += trace.Duration(s.End - s.Start)
	}
	return d
}

// spansDuration is the total length of disjoint spans.
func spansDuration(spans []trace.Span) trace.Duration {
	var d trace.Duration
	for _, s := range spans {
		d += trace.Duration(s.End - s.Start)
	}
	return d
}

// kernelSpeedup is the most a fix speeds up one kernel of category cat:
// a tensor-core kernel (GEMM, convolution, attention) by up to fastest
// (its precision changed down to the device's fastest rate); any other
// kernel by 2 (half the bytes in half precision; fusion keeps the kernel).
func kernelSpeedup(cat string, fastest float64) float64 {
	switch cat {
	case CategoryGEMM, CategoryGEMV, CategoryConv, CategoryAttention:
		return max(fastest, 1)
	}
	return 2
}

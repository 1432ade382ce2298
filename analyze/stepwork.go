package analyze

import (
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
	window            trace.Span
	spanDuration      trace.Duration
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
	for i, st := range t.Steps {
		w := &ws[i]
		w.own = per[i]
		w.window = trace.Span{Start: st.Start, End: st.End}
		byDev := map[int32][]trace.Span{}
		for _, g := range per[i] {
			a := &t.GPU[g]
			if a.End <= a.Start {
				continue
			}
			byDev[a.Device] = append(byDev[a.Device], trace.Span{Start: a.Start, End: a.End})
			if !w.has || a.Start < w.first {
				w.first = a.Start
			}
			if !w.has || a.End > w.last {
				w.last = a.End
			}
			w.has = true
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
		for _, g := range per[i] {
			if a := &t.GPU[g]; a.Kind == trace.Kernel {
				clip := trace.Span{Start: max(a.Start, w.window.Start), End: min(a.End, w.window.End)}
				d := clip.Dur()
				if ix.category(int(g)) == CategoryCommunication {
					// A collective spinning for a later rank is waiting
					// (spinAsWaiting), not work that remains.
					d -= ix.peerWaitIn(clip)
				}
				if d > 0 {
					w.irreducible = max(w.irreducible, us(d)/kernelSpeedup(ix.category(int(g)), fastest))
				}
			}
		}
		comp, comm := map[int32][]trace.Span{}, map[int32][]trace.Span{}
		for _, g := range per[i] {
			a := &t.GPU[g]
			if a.End <= a.Start {
				continue
			}
			if ix.category(int(g)) == CategoryCommunication {
				comm[a.Device] = append(comm[a.Device], a.Span)
			} else {
				comp[a.Device] = append(comp[a.Device], a.Span)
			}
		}
		for _, spans := range comp {
			w.computeUs += us(spansDuration(clipSpans(unionSpans(spans), w.window)))
		}
		for _, spans := range comm {
			w.commUs += us(spansDuration(clipSpans(unionSpans(spans), w.window)))
		}
		ix.measureBusy(w, byDev)
	}
	return ws
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
// (merged here, in place), summed in device order as the step's figures
// always were.
func (ix *index) measureBusy(w *stepWork, byDev map[int32][]trace.Span) {
	for _, dev := range ix.devices {
		busy := clipSpans(unionSpans(byDev[dev]), w.window)
		w.busyUs += us(spansDuration(busy))
		for _, g := range gapsIn(busy, w.window) {
			if g.Dur() < LaunchGap {
				w.launchGapUs += us(g.Dur())
			} else {
				w.longGapUs += us(g.Dur())
			}
		}
	}
}

// clipSpans clips sorted disjoint spans to w, dropping empty ones.
func clipSpans(spans []trace.Span, w trace.Span) []trace.Span {
	out := spans[:0]
	for _, s := range spans {
		s.Start, s.End = max(s.Start, w.Start), min(s.End, w.End)
		if s.End > s.Start {
			out = append(out, s)
		}
	}
	return out
}

// spansDuration is the total length of disjoint spans.
func spansDuration(spans []trace.Span) trace.Duration {
	var d trace.Duration
	for _, s := range spans {
		d += trace.Duration(s.End - s.Start)
	}
	return d
}

// gapsIn returns the parts of w that sorted disjoint spans inside w leave
// uncovered, the leading and trailing ones included.
func gapsIn(spans []trace.Span, w trace.Span) []trace.Span {
	var gaps []trace.Span
	cur := w.Start
	for _, s := range spans {
		if s.Start > cur {
			gaps = append(gaps, trace.Span{Start: cur, End: s.Start})
		}
		cur = max(cur, s.End)
	}
	if cur < w.End {
		gaps = append(gaps, trace.Span{Start: cur, End: w.End})
	}
	return gaps
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

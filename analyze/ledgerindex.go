package analyze

import (
	"cmp"
	"math"
	"slices"

	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/trace"
)

// ledgerIndex is what the ledger reads, built once per trace: each host
// source's intervals merged into one union over the whole trace (one
// pass over the host events in their order, no sort), which a step's
// window cuts its part from by binary search, and the GPU intervals that
// are not a step's own.
type ledgerIndex struct {
	win []trace.Span
	// order lists the windows by start; reach[i] is the latest end of
	// the windows order[0..i], so the windows an interval touches are
	// found by binary search and a short walk back.
	// starts[i] is window order[i]'s start, searched without the
	// indirection.
	order  []int
	starts []trace.Time
	reach  []trace.Time
	// minEnd[i] is the earliest end of the windows order[i:] that have
	// a length, and minLen the shortest such window's length: an
	// interval encloses one of them only if it starts at or before some
	// starts[i] and ends at or after minEnd[i] (enclosesWindow).
	minEnd []trace.Time
	minLen trace.Duration
	// union holds, per host source, the sorted, disjoint union of the
	// source's intervals, less those (of a source that does not keep
	// them, keepsEnclosing) that enclose a window with a length.
	// Those few (main(), the training loop) are cut into long
	// instead: per window, the parts of them that do not enclose it;
	// nil for a window without any (and long itself nil when no window
	// has any), so a trace holds 8 bytes a step at most, not 13 slices
	// (31 MB at 100 k steps, issue 27). The intervals have no name, so
	// they are Bounds: half a Span's bytes to grow and sort, and nothing
	// for the collector to scan.
	union [nSources][]interval.Bounds
	long  []*[nSources][]interval.Bounds
	// callDur is each sync or launch call's duration, by call (0 for
	// the other calls), read in the ledger's pass over the calls for
	// stepCalls.
	callDur []trace.Duration
	// other and before are the GPU busy intervals of work with a launch
	// (or a step) and of work launched before profiling began; peerWait
	// is Config.PeerWait. Each is sorted and disjoint.
	// They are Bounds, the GPU's busy intervals' own type, so other can
	// be the busy union itself.
	other, before, peerWait []interval.Bounds
}

// keepsEnclosing says which host sources keep an interval that encloses a
// whole window: a sync call, a launch or a compilation longer than the
// step is the step's time; a function or range around the whole step
// (main(), the loop) says nothing about it.
func keepsEnclosing(src ledgerSource) bool {
	return src == srcSync || src == srcLaunch || src == srcCompile
}

// newWindowIndex returns a ledger index of windows with no interval in
// it yet: the windows in start order, the reach and the earliest ends
// its searches read.
func newWindowIndex(windows []trace.Span) *ledgerIndex {
	li := &ledgerIndex{win: windows}
	li.order = make([]int, len(windows))
	for i := range li.order {
		li.order[i] = i
	}
	slices.SortStableFunc(li.order, func(a, b int) int { return cmp.Compare(windows[a].Start, windows[b].Start) })
	li.starts = make([]trace.Time, len(windows))
	li.reach = make([]trace.Time, len(windows))
	for i, w := range li.order {
		li.starts[i] = windows[w].Start
		li.reach[i] = windows[w].End
		if i > 0 {
			li.reach[i] = max(li.reach[i], li.reach[i-1])
		}
	}
	// A window without a length takes nothing from the host (the
	// ledger's intersections with it are empty): which intervals
	// enclose it does not matter, so it is left out of the test.
	li.minEnd = make([]trace.Time, len(windows))
	li.minLen = math.MaxInt64
	end := trace.Time(math.MaxInt64)
	for i := len(li.order) - 1; i >= 0; i-- {
		if w := windows[li.order[i]]; w.End > w.Start {
			end = min(end, w.End)
			li.minLen = min(li.minLen, w.Dur())
		}
		li.minEnd[i] = end
	}
	return li
}

func (ix *index) newLedgerIndex(windows []trace.Span) *ledgerIndex {
	t := ix.t
	li := newWindowIndex(windows)
	ix.fileHostWork(li)
	// Counted first, then filled: appended one by one, a million spans
	// left up to twice their size in garbage behind (issue 27).
	nBefore := 0
	for g := range t.GPU {
		if ix.gpuStep[g] < 0 && t.GPU[g].Launch == trace.None {
			nBefore++
		}
	}
	li.peerWait = interval.BoundsOf(unionSpans(slices.Clone(ix.peerWait)))
	if nBefore == 0 {
		if busy, ok := ix.soleBusy(); ok {
			// The common case: one device, all its work in steps (or
			// launched), no empty activity standing alone. Then other
			// is that device's busy union, so it is shared, not built
			// again (32 MB at 1 M kernels, issue 27).
			li.other = busy
			return li
		}
	}
	before := make([]trace.Span, 0, nBefore)
	other := make([]trace.Span, 0, len(t.GPU)-nBefore)
	for g := range t.GPU {
		a := &t.GPU[g]
		if a.End <= a.Start {
			continue
		}
		if ix.gpuStep[g] < 0 && a.Launch == trace.None {
			before = append(before, a.Span)
		} else {
			other = append(other, a.Span)
		}
	}
	li.other, li.before = interval.BoundsOf(unionSpans(other)), interval.BoundsOf(unionSpans(before))
	return li
}

// soleBusy returns the busy union of the trace's only device and true
// when every interval in it has a length: it is then the union of the
// GPU activities that have one (an empty one inside a busy interval
// changes nothing, one alone would be a point here). Callers must not
// modify it.
func (ix *index) soleBusy() ([]interval.Bounds, bool) {
	if ix.BusyFacts == nil || len(ix.BusyFacts.devices) != 1 {
		return nil, false
	}
	busy := ix.BusyFacts.busy[ix.BusyFacts.devices[0]]
	for _, s := range busy {
		if s.End <= s.Start {
			return nil, false
		}
	}
	return busy, true
}

package analyze

import (
	"cmp"
	"slices"

	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/trace"
)

// syncCost is what a blocking call s costs the step: the part of it during
// which the GPU idled too (idleDuring), plus the refill after it. When a
// sync returns, the GPU's queue is empty: it idles until the host has
// launched the next work, where without the sync the host would have
// launched that work while the GPU still ran what the sync waited for.
// The refill is that GPU idle time from the call's end to the next GPU
// work, at most the GPU busy time inside the call (the work the host
// could have overlapped with), averaged over devices as idleDuring.
func (ix *index) syncCost(s trace.Span) trace.Duration {
	n := trace.Duration(max(len(ix.devices), 1))
	idle := ix.idleDuring(s)
	busy := ix.busyIn(s.Start, s.End) / n
	var refill trace.Duration
	for _, dev := range ix.devices {
		refill += ix.idleAfter(dev, s.End)
	}
	return idle + min(refill/n, busy)
}

// idleAfter is how long device dev stays idle from at on: 0 when it is
// busy at at, else the time to its next busy interval (to the trace's end
// when none follows).
func (b *BusyFacts) idleAfter(dev int32, at trace.Time) trace.Duration {
	spans := b.busy[dev]
	i, _ := slices.BinarySearchFunc(spans, at, func(s interval.Bounds, t trace.Time) int { return cmp.Compare(s.End, t) })
	if i == len(spans) {
		return 0 // nothing follows: no work waits to be refilled
	}
	if spans[i].Start <= at {
		return 0
	}
	return trace.Duration(spans[i].Start - at)
}

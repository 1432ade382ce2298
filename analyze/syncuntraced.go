package analyze

import "github.com/tracelens/tracelens/trace"

// syncCostUntraced is syncCost for the program run without the profiler,
// in µs. A blocking call costs the step the GPU's idle time during it plus
// its refill: the GPU idles after the call until the host has launched
// more work (R), which with no sync the host would have done while the
// GPU still ran the work the call waited for (W), so min(R, W). Both
// change once the profiler's own host work is out (profilerClock):
//   - R shrinks by the profiler's cost of the events the host recorded in
//     the refill;
//   - W grows when the GPU was ahead: the host reaches the call sooner by
//     the profiler's cost of its run-up (from the last sync of the step,
//     else the step start), while the GPU still has the same work to do,
//     so the untraced wait is at least that work less the host's untraced
//     run-up.
//
// A host-bound step (the GPU waits for each launch) keeps W: the host
// arriving sooner launches the work sooner too.
func (ix *index) syncCostUntraced(clock *profilerClock, s trace.Span, from trace.Time) float64 {
	cost, _ := ix.syncUntraced(clock, s, from)
	return cost
}

// syncUntraced is syncCostUntraced and the host time the untraced program
// spends blocked in the call: at least the traced call, and the GPU work
// left when the host arrives sooner (W).
func (ix *index) syncUntraced(clock *profilerClock, s trace.Span, from trace.Time) (cost, blocked float64) {
	n := trace.Duration(max(len(ix.devices), 1))
	idle := us(ix.idleDuring(s))
	wait := us(ix.busyIn(s.Start, s.End) / n)
	var refill trace.Duration
	for _, dev := range ix.devices {
		refill += ix.idleAfter(dev, s.End)
	}
	r := us(refill / n)
	r -= clock.costUs(s.End, s.End+trace.Time(refill/n))
	if from < s.Start {
		gpu := us(ix.busyIn(from, s.End) / n)
		host := us(trace.Duration(s.Start-from)) - clock.costUs(from, s.Start)
		wait = max(wait, gpu-host)
	}
	return idle + max(min(r, wait), 0), max(us(s.Dur()), wait)
}

package distributed

import (
	"slices"

	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/stats"
	"github.com/tracelens/tracelens/trace"
)

// A rank that reaches a collective before the others launches its NCCL
// kernel, which then spins until the last rank arrives: the GPU is "busy"
// while the rank only waits. The part of that spin no compute kernel of
// the rank hides is the rank's peer wait: time its own work does not need,
// which the late rank's fix gives back (and no single-rank fix can).

// PeerWaits returns the intervals, on the clock of run.Ranks[ri]'s own
// trace, during which its communication kernels waited for the last rank
// of their collective: from each matched kernel's start, for its wait
// (Collective.Wait), at most the kernel. Sorted and disjoint; nil when
// ri is out of range or nothing waited.
func (run *Run) PeerWaits(ri int) []trace.Span {
	if ri < 0 || ri >= len(run.Ranks) {
		return nil
	}
	var out []trace.Span
	for ci := range run.Collectives {
		c := &run.Collectives[ci]
		for i, p := range c.Participants {
			if p != ri {
				continue
			}
			if s, ok := run.waitSpan(c, i); ok {
				out = append(out, s)
			}
		}
	}
	return interval.Union(interval.NonEmpty(out))
}

// waitSpan is participant i's wait in c on its own clock.
func (run *Run) waitSpan(c *Collective, i int) (trace.Span, bool) {
	rc := &run.Ranks[c.Participants[i]].Collectives[c.Calls[i]]
	w := min(c.Wait(i), rc.Dur())
	if w <= 0 {
		return trace.Span{}, false
	}
	return trace.Span{Start: rc.Start, End: rc.Start + trace.Time(w)}, true
}

// exposedWait is the part of participant i's wait in c during which no
// compute kernel of its rank ran: what its step loses to the late rank.
func (run *Run) exposedWait(c *Collective, i int) trace.Duration {
	s, ok := run.waitSpan(c, i)
	if !ok {
		return 0
	}
	rc := &run.Ranks[c.Participants[i]].Collectives[c.Calls[i]]
	return s.Dur() - interval.Overlap(rc.Under, s)
}

// hostLimit is the rank whose host bounds a straggler's saving
// (gainBounds): its index, its slack per step and its own host work per
// step.
type hostLimit struct {
	Index       int
	Slack, Host trace.Duration
}

// gainBounds is what the ranks other than s could gain per step if rank
// index s were never late: over the collectives s arrived at last, each
// other rank's exposed wait (its wait less the compute it ran meanwhile:
// its own work, which still runs after the fix), per step, the median
// over those ranks; and at most any other rank's host slack (hostSlack):
// the ranks move in lockstep, so the step after the fix is at least each
// one's own host work, and a host-bound rank gives little back.
// It returns the rank whose host limits it (Index −1 when no host
// does).
func (run *Run) gainBounds(s int) (trace.Duration, hostLimit) {
	gain := make([]trace.Duration, len(run.Ranks))
	for ci := range run.Collectives {
		c := &run.Collectives[ci]
		l, ok := c.lateArrival()
		if !ok || c.Participants[l] != s {
			continue
		}
		for i, p := range c.Participants {
			if i != l {
				gain[p] += run.exposedWait(c, i)
			}
		}
	}
	var others []trace.Duration
	limit := hostLimit{Index: -1}
	period := run.stepPeriod()
	for i := range run.Ranks {
		if i == s {
			continue
		}
		others = append(others, gain[i])
		if slack, own, ok := run.hostSlack(i, period); ok && (limit.Index < 0 || slack < limit.Slack) {
			limit = hostLimit{Index: i, Slack: slack, Host: own}
		}
	}
	bound := stats.Median(others) / trace.Duration(run.stepCount())
	if limit.Index < 0 || limit.Slack >= bound {
		return bound, hostLimit{Index: -1}
	}
	return limit.Slack, limit
}

// hostSlack is how much rank index ri's step could shrink before its
// host's own work bounds it: period (the run's step period, stepPeriod)
// less the median of ri's HostOwn, which it also returns. A rank whose
// host waits in a sync every step has the wait as slack; one whose host
// runs ahead has the difference of the ranges. ok is false when the
// trace has no API calls to tell.
func (run *Run) hostSlack(ri int, period trace.Duration) (slack, own trace.Duration, ok bool) {
	if len(run.Ranks[ri].HostOwn) == 0 {
		return 0, 0, false
	}
	own = stats.Median(slices.Clone(run.Ranks[ri].HostOwn))
	return max(period-own, 0), own, true
}

// stepPeriod is the run's step period: the longest median step range of
// its ranks, which move in lockstep.
func (run *Run) stepPeriod() trace.Duration {
	var period trace.Duration
	for _, r := range run.Ranks {
		walls := make([]trace.Duration, len(r.Steps))
		for i, st := range r.Steps {
			walls[i] = st.Dur()
		}
		period = max(period, stats.Median(walls))
	}
	return period
}

// ownUnion is the union of part(c) over rank index ri's communication
// kernels: what ran on its GPU inside them (RankCollective.Under, its
// compute kernels; RankCollective.Active, any other activity).
func (run *Run) ownUnion(ri int, part func(*RankCollective) []trace.Span) []trace.Span {
	var inside []trace.Span
	for i := range run.Ranks[ri].Collectives {
		inside = append(inside, part(&run.Ranks[ri].Collectives[i])...)
	}
	return interval.Union(inside)
}

func under(c *RankCollective) []trace.Span  { return c.Under }
func active(c *RankCollective) []trace.Span { return c.Active }

// outside is the length of waits (sorted, disjoint) outside the union u.
// A rank's peer wait is its waits (PeerWaits, each instant once: a
// tensor-parallel all-reduce and a data-parallel all-gather can wait at
// the same time) outside its compute (ownUnion of under); its GPU spin,
// outside any other activity of its GPU (ownUnion of active): its GPU
// busy time less the spin is the time its own work took.
func outside(waits, u []trace.Span) trace.Duration {
	var d trace.Duration
	for _, w := range waits {
		d += w.Dur() - interval.Overlap(u, w)
	}
	return d
}

package distributed

import (
	"slices"

	"github.com/tracelens/tracelens/stats"
	"github.com/tracelens/tracelens/trace"
)

// Straggler thresholds: a rank is a straggler when the others wait for it
// at least stragglerShare of the median step (and stragglerMin) per step,
// and its lateness is most of all ranks' lateness. Balanced runs show a
// few percent of arrival noise, spread over the ranks.
const (
	stragglerShare = 0.10
	stragglerMin   = 500_000 // ns
	stragglerLast  = 0.5
)

// StragglerCandidate is the rank the others wait for most, with the
// figures that decide whether it is a straggler.
type StragglerCandidate struct {
	// Index is into Run.Ranks; Reference is the rank to compare it with
	// (the median of the others by how often they are last).
	Index     int
	Reference int
	// Late is the straggler's arrival minus the median of the others',
	// summed over the collectives it arrived at last, per step.
	Late trace.Duration
	// LateShare is this rank's lateness over all ranks' (each summed over
	// the collectives the rank arrived at last), 0–1.
	LateShare float64
	Step      trace.Duration
	Steps     int
	// Is reports whether the thresholds are met.
	Is bool
}

// stepCount is the number of steps per-step figures of the run divide
// by: the most ProfilerSteps any rank has, at least 1.
func (run *Run) stepCount() int {
	n := 1
	for _, r := range run.Ranks {
		n = max(n, len(r.Steps))
	}
	return n
}

// lateBy is how late c's last participant l was: its arrival minus the
// median of the others', but no more than the longest any other
// participant's kernel actually waited (its wait, at most its kernel): a
// rank whose kernel finished before the last one arrived (NCCL let it
// complete into the peer's buffers) did not wait for it, and without the
// cap lateness summed over such calls could exceed the step.
func (run *Run) lateBy(c *Collective, l int) trace.Duration {
	others := make([]trace.Duration, 0, len(c.Arrive)-1)
	var waited trace.Duration
	for i, a := range c.Arrive {
		if i == l {
			continue
		}
		others = append(others, trace.Duration(a))
		rc := &run.Ranks[c.Participants[i]].Collectives[c.Calls[i]]
		waited = max(waited, min(c.Wait(i), rc.Dur()))
	}
	return min(trace.Duration(c.Arrive[l])-stats.Median(others), waited)
}

// Straggler returns the rank the others wait for most. ok is false when
// no collective was matched.
func (run *Run) Straggler() (StragglerCandidate, bool) {
	if len(run.Collectives) == 0 || len(run.Ranks) < 2 {
		return StragglerCandidate{}, false
	}
	late := make([]trace.Duration, len(run.Ranks))
	var total trace.Duration
	for ci := range run.Collectives {
		c := &run.Collectives[ci]
		l, ok := c.lateArrival()
		if !ok {
			continue
		}
		p := c.Participants[l]
		d := run.lateBy(c, l)
		late[p] += d
		total += d
	}
	best := 0
	for i := range late {
		if late[i] > late[best] {
			best = i
		}
	}
	var steps []trace.Duration
	for _, s := range run.Stats {
		steps = append(steps, s.StepMedian)
	}
	sc := StragglerCandidate{Index: best, Step: stats.Median(steps), Steps: run.stepCount()}
	sc.Late = late[best] / trace.Duration(sc.Steps)
	if total > 0 {
		sc.LateShare = float64(late[best]) / float64(total)
	}
	// The reference: among the others, the median by lateness.
	var others []int
	for i := range run.Ranks {
		if i != best {
			others = append(others, i)
		}
	}
	slices.SortStableFunc(others, func(a, b int) int { return int(late[a] - late[b]) })
	sc.Reference = others[len(others)/2]
	threshold := max(trace.Duration(stragglerShare*float64(sc.Step)), stragglerMin)
	sc.Is = sc.Late >= threshold && sc.LateShare >= stragglerLast
	return sc, true
}

package distributed

import (
	"slices"

	"github.com/tracelens/tracelens/trace"
)

// Straggler thresholds: a rank is a straggler when the others wait for it
// at least stragglerShare of the median step (and stragglerMin) per step,
// and it is the last to arrive at most of the collectives someone was
// late for. Balanced runs show a few percent of arrival noise.
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
	// LastShare is the share of late collectives (someone > lateSlack
	// behind) at which this rank was the last.
	LastShare float64
	Step      trace.Duration
	Steps     int
	// Is reports whether the thresholds are met.
	Is bool
}

// Straggler returns the rank the others wait for most. ok is false when
// no collective was matched.
func (run *Run) Straggler() (StragglerCandidate, bool) {
	if len(run.Collectives) == 0 || len(run.Ranks) < 2 {
		return StragglerCandidate{}, false
	}
	late := make([]trace.Duration, len(run.Ranks))
	lasts := make([]int, len(run.Ranks))
	total := 0
	for ci := range run.Collectives {
		c := &run.Collectives[ci]
		l, spread := c.Last()
		if spread <= lateSlack {
			continue
		}
		total++
		p := c.Participants[l]
		lasts[p]++
		others := make([]trace.Duration, 0, len(c.Arrive)-1)
		for i, a := range c.Arrive {
			if i != l {
				others = append(others, trace.Duration(a))
			}
		}
		late[p] += trace.Duration(c.Arrive[l]) - median(others)
	}
	best := 0
	for i := range late {
		if late[i] > late[best] {
			best = i
		}
	}
	var steps []trace.Duration
	nsteps := 0
	for _, s := range run.Stats {
		steps = append(steps, s.StepMedian)
		nsteps = max(nsteps, s.Steps)
	}
	sc := StragglerCandidate{Index: best, Step: median(steps), Steps: max(nsteps, 1)}
	sc.Late = late[best] / trace.Duration(sc.Steps)
	if total > 0 {
		sc.LastShare = float64(lasts[best]) / float64(total)
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
	sc.Is = sc.Late >= threshold && sc.LastShare >= stragglerLast
	return sc, true
}

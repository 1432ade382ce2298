package distributed

import (
	"slices"

	"github.com/tracelens/tracelens/interval"

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
	// stragglerRootWait: a rank whose own wait in collectives is at most
	// this share of its lateness waits for no one: the others' lateness
	// cascades from it.
	stragglerRootWait = 0.1
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
	// Cascade is true when the rank is the straggler although its share
	// of all late time is under half: the others' lateness cascades from
	// it (it is late, yet hardly waits itself).
	Cascade bool
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

// lateTally sums a rank's lateness over collectives it arrived at last,
// bounded by the time the others actually spent waiting: the union of
// their wait intervals. Collectives that overlap in time (FSDP's
// all-gathers on one group beside tensor-parallel all-reduces on
// another, or back-to-back calls the late rank reaches late for the same
// reason) would otherwise count one wait several times, and a rank could
// be "late" longer than the step.
type lateTally struct {
	sum   trace.Duration
	spans []trace.Span
}

// add counts collective c, whose last participant is l.
func (t *lateTally) add(run *Run, c *Collective, l int) {
	t.sum += run.lateBy(c, l)
	for i := range c.Arrive {
		if i == l {
			continue
		}
		rc := &run.Ranks[c.Participants[i]].Collectives[c.Calls[i]]
		if w := min(c.Wait(i), rc.Dur()); w > 0 {
			t.spans = append(t.spans, trace.Span{Start: c.Arrive[i], End: c.Arrive[i] + trace.Time(w)})
		}
	}
}

// total is the tally's lateness: its sum, at most the union of the
// others' waits.
func (t *lateTally) total() trace.Duration {
	if t == nil {
		return 0
	}
	return min(t.sum, interval.UnionLength(t.spans))
}

// Straggler returns the rank the others wait for most. ok is false when
// no collective was matched.
func (run *Run) Straggler() (StragglerCandidate, bool) {
	if len(run.Collectives) == 0 || len(run.Ranks) < 2 {
		return StragglerCandidate{}, false
	}
	tally := make([]lateTally, len(run.Ranks))
	for ci := range run.Collectives {
		c := &run.Collectives[ci]
		if l, ok := c.lateArrival(); ok {
			tally[c.Participants[l]].add(run, c, l)
		}
	}
	late := make([]trace.Duration, len(run.Ranks))
	var total trace.Duration
	for i := range tally {
		late[i] = tally[i].total()
		total += late[i]
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
	// In a 2-D mesh lateness cascades: a rank that waited for the
	// straggler in one group arrives late at its next collective in
	// another, so the straggler's share of all late time can fall under
	// half. The rank that is late yet hardly ever waits itself is still
	// the cause.
	root := run.Stats[best].Wait <= trace.Duration(stragglerRootWait*float64(late[best]))
	sc.Cascade = root && sc.LateShare < stragglerLast
	sc.Is = sc.Late >= threshold && (sc.LateShare >= stragglerLast || root)
	return sc, true
}

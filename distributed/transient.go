package distributed

import (
	"fmt"
	"strings"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/trace"
)

// A straggler is steady when the same rank is late in (nearly) every
// step: an imbalance in its work. It is transient when it is late in only
// some steps, and shifting when different ranks are late in different
// steps: then something happens in those steps (a GC pause, a
// checkpoint, logging, a data stall, host contention), not a steady
// imbalance, and the fix is not the one for a slow rank.

// Straggler patterns (StepPattern.Kind).
const (
	SteadyStraggler    = "steady"
	TransientStraggler = "transient"
	ShiftingStraggler  = "shifting"
)

// steadyShare is the share of the profiled steps a rank must be late in,
// with no other rank late in any, for its lateness to be steady.
const steadyShare = 0.75

// StepPattern says which rank is late in which steps, and how much.
type StepPattern struct {
	Kind string
	// Late[i] is, for step i (0-based, in profiled order), the rank that
	// was latest in it (-1 when none reached the threshold) and by how
	// much: its arrivals minus the median of the others', summed over the
	// collectives it reached last in the step.
	Late []StepLate
}

// StepLate is one step's late rank.
type StepLate struct {
	Rank int
	Late trace.Duration
}

// stepPattern finds, step by step, the rank the others wait for, and
// classifies the run's straggler (index s into Ranks) by it. A step has
// a late rank when its lateness reaches the straggler threshold
// (stragglerShare of the median step, at least stragglerMin).
func (run *Run) stepPattern(s int, step trace.Duration) StepPattern {
	n := run.stepCount()
	tally := make([]map[int]*lateTally, n)
	for ci := range run.Collectives {
		c := &run.Collectives[ci]
		l, ok := c.lateArrival()
		if !ok {
			continue
		}
		// The step is the one whose host launched the collective (its
		// kernel may run after the host moved on), on the first rank.
		p0 := c.Participants[0]
		rc := &run.Ranks[p0].Collectives[c.Calls[0]]
		at := rc.Launch
		if at < 0 {
			at = rc.Start
		}
		st := stepOf(run.Ranks[p0].Steps, at)
		if st < 0 || st >= n {
			continue
		}
		if tally[st] == nil {
			tally[st] = map[int]*lateTally{}
		}
		t := tally[st][c.Participants[l]]
		if t == nil {
			t = &lateTally{}
			tally[st][c.Participants[l]] = t
		}
		t.add(run, c, l)
	}
	late := make([]map[int]trace.Duration, n)
	for st, m := range tally {
		late[st] = map[int]trace.Duration{}
		for ri, t := range m {
			late[st][ri] = t.total()
		}
	}
	threshold := max(trace.Duration(stragglerShare*float64(step)), stragglerMin)
	pat := StepPattern{Late: make([]StepLate, n)}
	own, other := 0, 0
	for i, m := range late {
		pat.Late[i] = StepLate{Rank: -1}
		for ri, d := range m {
			if d >= threshold && (d > pat.Late[i].Late || d == pat.Late[i].Late && ri < pat.Late[i].Rank) {
				pat.Late[i] = StepLate{Rank: ri, Late: d}
			}
		}
		switch r := pat.Late[i].Rank; {
		case r == s:
			own++
		case r >= 0:
			other++
		}
	}
	switch {
	case other > 0:
		pat.Kind = ShiftingStraggler
	case float64(own) >= steadyShare*float64(n):
		pat.Kind = SteadyStraggler
	default:
		pat.Kind = TransientStraggler
	}
	return pat
}

// describe says which rank is late in which steps ("rank 1 in steps
// 1–2; rank 0 in steps 3–5", "rank 2 in steps 2, 4"), with global rank
// numbers, ranks in order of their first late step.
func (run *Run) describe(p StepPattern) string {
	var order []int
	steps := map[int][]int{}
	for i, l := range p.Late {
		if l.Rank < 0 {
			continue
		}
		if steps[l.Rank] == nil {
			order = append(order, l.Rank)
		}
		steps[l.Rank] = append(steps[l.Rank], i+1)
	}
	parts := make([]string, 0, len(order))
	for _, r := range order {
		parts = append(parts, fmt.Sprintf("rank %d in %s", run.Ranks[r].Rank, stepList(steps[r])))
	}
	return strings.Join(parts, "; ")
}

// stepList writes sorted step numbers with runs as ranges: "step 3",
// "steps 1–2", "steps 2, 4", "steps 1–2, 5".
func stepList(v []int) string {
	var parts []string
	for i := 0; i < len(v); {
		j := i
		for j+1 < len(v) && v[j+1] == v[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d–%d", v[i], v[j]))
		} else {
			parts = append(parts, fmt.Sprint(v[i]))
		}
		i = j + 1
	}
	if len(v) == 1 {
		return "step " + parts[0]
	}
	return "steps " + strings.Join(parts, ", ")
}

// patternEvidence adds the per-step table and, for a straggler that is
// not steady, says so in the title and the fix.
func (run *Run) patternEvidence(f *Finding, p StepPattern, kind string) {
	t := analyze.NewTable(analyze.Col("step", analyze.KindCount), analyze.Col("late rank", analyze.KindName),
		analyze.Col("late by", analyze.KindDuration))
	for i, l := range p.Late {
		who := "none"
		if l.Rank >= 0 {
			who = fmt.Sprintf("rank %d", run.Ranks[l.Rank].Rank)
		}
		t.Add(analyze.Count(float64(i+1)), analyze.NameCell(who), analyze.Dur(l.Late))
	}
	f.Measures = append(f.Measures, analyze.Measure{Name: "pattern", Value: analyze.NameCell(p.Kind)})
	f.Evidence = append(f.Evidence, analyze.Evidence{Text: fmt.Sprintf(
		"step by step (profiled order), the rank the others waited for most, when it was late by at least %s of the step: %s (%s)",
		analyze.FormatShare(stragglerShare), p.Kind, cmpOr(run.describe(p), "no step on its own")), Table: t})
	if p.Kind == SteadyStraggler {
		return
	}
	r := f.Ranks[0]
	switch p.Kind {
	case ShiftingStraggler:
		f.Title = truncate(fmt.Sprintf("The late rank shifts between steps (%s) at the %s", run.describe(p), kind), 100)
		f.Ranks = run.lateRanks(p, r)
	default:
		f.Title = truncate(fmt.Sprintf("Rank %d makes the others wait in some steps only (%s) at the %s", r, run.describe(p), kind), 100)
	}
	f.Confidence = analyze.Medium
	f.Fix = "No rank is late every step: look at what happens in the steps where one is (a GC pause, a checkpoint or logging every N steps, " +
		"a data stall, another process on the host), not at a steady imbalance of work. Profile more steps to see whether it recurs. " + f.Fix
}

// lateRanks are the global ranks late in some step of p: first (the
// rank late most over the run), then the others in order of first
// lateness.
func (run *Run) lateRanks(p StepPattern, first int) []int {
	out := []int{first}
	for _, l := range p.Late {
		if l.Rank >= 0 && !containsInt(out, run.Ranks[l.Rank].Rank) {
			out = append(out, run.Ranks[l.Rank].Rank)
		}
	}
	return out
}

func containsInt(v []int, x int) bool {
	for _, y := range v {
		if y == x {
			return true
		}
	}
	return false
}

func cmpOr(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// hostFix words the fix for a host straggler by what its host does
// longer: an input pipeline only when the late range is data loading; a
// sync or the user's own code (logging, checkpointing, metrics) named as
// such.
func hostFix(ex *Explanation) string {
	d, ok := ex.top("annotation", "python", "sync", "op")
	if !ok {
		return fmt.Sprintf("Rank %d's host is late, not its GPU: find the host work it does longer than rank %d before the collective (tracelens diff on the two rank files) and move it off the step's critical path.", ex.Straggler, ex.Reference)
	}
	name := strings.ToLower(d.Name)
	switch {
	case d.What == "sync" || strings.Contains(name, "synchronize") || strings.Contains(name, ".item"):
		return fmt.Sprintf("Rank %d's host waits in its own synchronisation (%s `%s`, %s longer per step than rank %d) before the collective: remove the sync (torch.cuda.synchronize(), .item(), .cpu() in logging or metrics), or do it every N steps, on all ranks alike.",
			ex.Straggler, whatWord(d.What), d.Name, d.Delta(), ex.Reference)
	case inputName(name):
		return fmt.Sprintf("Rank %d's host is late, not its GPU, in its input pipeline (%s `%s`, %s longer per step than rank %d): more DataLoader workers, pin_memory, prefetch, or balance the data across ranks.",
			ex.Straggler, whatWord(d.What), d.Name, d.Delta(), ex.Reference)
	}
	return fmt.Sprintf("Rank %d's host is late, not its GPU: its %s `%s` takes %s longer per step than on rank %d before the collective. If that is your own code on one rank (logging, checkpointing, metrics, a sleep), do it on all ranks, every N steps or off the critical path; otherwise compare the two ranks with tracelens diff.",
		ex.Straggler, whatWord(d.What), d.Name, d.Delta(), ex.Reference)
}

// inputName reports whether a range, op or Python call name is input
// loading (a DataLoader, a data-named range, a batch fetch).
func inputName(name string) bool {
	for _, w := range []string{"dataloader", "data_loader", "dataset", "load_batch", "get_batch", "next_batch", "collate", "prefetch", "_next_data", "__next__", "data.next", "dataloader.next"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

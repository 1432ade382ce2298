package analyze

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/tracelens/tracelens/trace"
)

// Thresholds of host-bound.
const (
	// HostBoundMinGapShare is the share of the step that the GPU must
	// spend idle in short gaps (under LaunchGap) between its work.
	HostBoundMinGapShare = 0.3
	// hostBoundMaxRows bounds the table of host work.
	hostBoundMaxRows = 6
)

// HostBound detects steps that launch little GPU work yet leave the GPU
// idle most of the step in short gaps: each step's host work (framework
// dispatch, Python, argument handling) takes longer than the few kernels
// it launches. launch-bound covers steps of many launches, gpu-idle long
// gaps; this is the rest of "the GPU waits for the host", common in
// small-batch inference, jitted JAX calls and eager calls of small
// functions.
var HostBound = &Analyzer{
	Name: "host-bound",
	Doc: fmt.Sprintf("Reports steps with fewer than %d launches whose GPU is busy less than %.0f%% of the step and idle at least "+
		"%.0f%% of it in short gaps (< %s) between its work, no less than in long gaps (medians over the steps after the first, "+
		"at least two): the host's work per step, not "+
		"launches and not one long wait, sets the pace. Evidence: the host ops with the most self time per step. Saving model: the "+
		"short-gap idle time per step, the most that doing more work per step (a larger batch, several steps per call) or "+
		"replaying it (a CUDA graph) can hide.",
		LaunchBoundMinLaunches, LaunchBoundMaxBusy*100, HostBoundMinGapShare*100, LaunchGap),
	Requires: []*Analyzer{IdleGaps},
	Run:      runHostBound,
}

func runHostBound(p *Pass) ([]Finding, error) {
	t, r := p.Trace, p.Result
	steps := steadySteps(r)
	if len(steps) < 2 || len(p.ix.devices) == 0 {
		return nil, nil // one step cannot show a repeated pace
	}
	ss := &r.StepStats
	wall, busy, launches := ss.SteadyWallUs, ss.SteadyGPUBusyUs, ss.SteadyLaunches
	gapIdle := medianOf(steps, func(s *Step) float64 { return s.LaunchGapIdleUs })
	ndev := float64(len(p.ix.devices))
	if wall <= 0 || launches >= LaunchBoundMinLaunches || launches < 1 {
		return nil, nil
	}
	share := busy / (wall * ndev)
	// Long gaps are gpu-idle's: where they outweigh the short ones, one
	// host wait per step (a data load, a compiled function's wrapper),
	// not the pace of the host's work, is the story.
	longIdle := medianOf(steps, func(s *Step) float64 { return s.LongGapIdleUs })
	if share >= LaunchBoundMaxBusy || gapIdle < HostBoundMinGapShare*wall*ndev || gapIdle < longIdle {
		return nil, nil
	}
	tb, top, opUs := hostWork(t, r)
	unit := "step"
	if src := r.Summary.StepSource; src == StepSourceRange || src == StepSourceCall || src == StepSourceJit {
		unit = "call of " + r.Summary.StepLabel
	}
	plural := "es"
	if launches == 1 {
		plural = ""
	}
	title := fmt.Sprintf("host-bound: GPU busy %.0f%% of each %s (%s), %.0f launch%s",
		share*100, ClipName(unit, 45), fmtUs(wall), launches, plural)
	api := ss.SteadyLaunchAPIUs
	cost := "the host work around them takes the rest"
	if api >= 0.5*gapIdle {
		cost = "launch calls are a large part of the host's work"
	}
	ev := []Evidence{
		{Text: fmt.Sprintf("median %s after the first: wall %s, GPU busy %s (%.0f%%), %s idle in gaps shorter than %s; %.0f launches "+
			"taking %s in launch calls (%.0f%% of that idle): %s", unit, fmtUs(wall), fmtUs(busy), share*100, fmtUs(gapIdle), LaunchGap,
			launches, fmtUs(api), shareOf(api, gapIdle)*100, cost)},
	}
	if len(tb.Rows) > 0 {
		ev = append(ev, Evidence{Text: fmt.Sprintf("host ops with the most self time per %s (framework ops cover %s of the %s; the rest is Python and the framework between them):",
			unit, fmtUs(opUs), fmtUs(wall)), Table: tb})
	}
	ev = append(ev, Evidence{Text: "saving model: the short-gap idle time per step, the most that more work per step or a replay can hide"})
	return []Finding{{
		Title:      title,
		Subject:    "host work per step",
		Severity:   severityByShare(p.shareOfStep(gapIdle)),
		SavingUs:   gapIdle,
		SavingFrom: FromLaunchGaps,
		Measures: []Measure{
			{"median step", DurUs(wall)},
			{"GPU busy", Percent(share)},
			{"launches per step", Count(launches)},
			{"short-gap idle per step", DurUs(gapIdle)},
			{"host op time per step", DurUs(opUs)},
		},
		Evidence:   ev,
		Fix:        hostBoundFix(t, r, top),
		Confidence: Medium,
	}}, nil
}

// hostWork returns the host ops with the most self time per steady step
// (a table, the top one's name) and the time the top-level ops take per
// step.
func hostWork(t *trace.Trace, r *Result) (*Table, string, float64) {
	first := 0
	if len(t.Steps) > 1 {
		first = 1
	}
	n := float64(max(len(t.Steps)-first, 1))
	child := make([]trace.Duration, len(t.Ops))
	for i := range t.Ops {
		if p := t.Ops[i].Parent; p != trace.None {
			child[p] += t.Ops[i].Dur()
		}
	}
	self := map[string]trace.Duration{}
	calls := map[string]int{}
	var top trace.Duration
	for i := range t.Ops {
		o := &t.Ops[i]
		if st := t.StepOf(o.Start); st < first {
			continue
		}
		self[o.Name] += max(o.Dur()-child[i], 0)
		calls[o.Name]++
		if o.Parent == trace.None {
			top += o.Dur()
		}
	}
	names := make([]string, 0, len(self))
	for k := range self {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(self[b], self[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	tb := NewTable(Col("host op", KindName), Col("self time per step", KindDuration), Col("calls per step", KindCount))
	for _, k := range names[:min(len(names), hostBoundMaxRows)] {
		tb.Add(NameCell(k), DurUs(us(self[k])/n), Count(float64(calls[k])/n))
	}
	name := ""
	if len(names) > 0 {
		name = names[0]
	}
	return tb, name, min(us(top)/n, r.StepStats.SteadyWallUs)
}

// hostBoundFix says how to make the host's work per step smaller than
// the GPU's, in the framework's terms.
func hostBoundFix(t *trace.Trace, r *Result, top string) string {
	where := ""
	if top != "" {
		where = " (most host time: " + ClipName(top, 50) + ")"
	}
	if r.Summary.Framework == "JAX" {
		return "each call does too little GPU work for its host cost" + where + ": run several steps per call (jax.lax.scan or " +
			"fori_loop over steps inside one jit), make each call do more work (a larger batch, vmap), and keep arguments on the " +
			"device (a Python scalar or NumPy array argument is copied host→device on every call; pass jax arrays)"
	}
	fix := "each step does too little GPU work for its host cost" + where + ": batch more work per step (a larger batch, " +
		"several items per call), capture the step in a CUDA graph (torch.cuda.CUDAGraph / torch.compile(mode=\"reduce-overhead\")) " +
		"so the host replays it in one launch, and move per-step Python work (logging, .item(), data preparation) off the step's path"
	if t.Meta.CUDAProgram() {
		fix = "each step does too little GPU work for its host cost" + where + ": issue more work per launch, or record the step in a " +
			"CUDA graph (cuStreamBeginCapture … cuGraphLaunch) and replay it"
	}
	return fix
}

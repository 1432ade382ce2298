package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// Thresholds of gpu-idle.
const (
	// GPUIdleMinShare is the share of the median step the GPU must spend
	// idle in long gaps (LaunchGap or longer) for gpu-idle to report it.
	GPUIdleMinShare = 0.2
	// GPUIdleMaxGaps bounds the gaps listed as evidence.
	GPUIdleMaxGaps = 5
	// GPUIdleShareGaps bounds the longest gaps whose host work measures
	// the share of the idle time the cause explains (each is a scan of
	// the host events).
	GPUIdleShareGaps = 20
)

// GPUIdle finds long GPU idle gaps inside steps and where the host was.
var GPUIdle = &Analyzer{
	Name: "gpu-idle",
	Doc: fmt.Sprintf("Finds GPU idle gaps of at least %s inside steps (short gaps between launches are launch-bound's business), "+
		"reported when they add up to at least %.0f%% of the median step (after the first); gaps covered by torch.compile work are "+
		"left to compile-overhead. Without step markers the gaps before the first and after the last GPU activity "+
		"(profiler start and stop) do not count. For the longest gaps it names where the host was: the user Python functions, "+
		"built-in calls without a source line (time.sleep), DataLoader and torch.optim frames, record_function ranges (even longer than the gap), "+
		"ops or sync calls that overlap the gap most, or the longest stretch of it in which the loop's thread recorded nothing (host work the profiler did not see, named after the op before it: a .tolist(), Python between ops), and the cause that explains most of the idle time (data loading, optimizer step, "+
		"built-in call, synchronisation, torch.compile wrapper, user range, host code); the fix is that cause's (DataLoader workers only "+
		"for data loading). Saving model: the long-gap idle time per step times the share of the %d longest gaps that cause's host work covers "+
		"(the fix removes that cause's waiting, not other host work in the gaps); untraced, each gap less the profiler's own host work in it.", LaunchGap, GPUIdleMinShare*100, GPUIdleShareGaps),
	Requires: []*Analyzer{IdleGaps, CompileRegions, Attribution, Steps, ProfilerClock},
	Run:      runGPUIdle,
}

type idleGap struct {
	span  trace.Span
	step  int // the step's Number
	index int // the step's index in Trace.Steps
}

func runGPUIdle(p *Pass) ([]Finding, error) {
	t, ix, r := p.Trace, p.ix, p.Result
	steps := steadySteps(r)
	if len(steps) == 0 || len(ix.devices) == 0 {
		return nil, nil
	}
	wall := medianOf(steps, func(s *Step) float64 { return s.WallUs })
	gaps, perStep := longIdleGaps(p)
	idle := median(perStep)
	if wall <= 0 || idle < GPUIdleMinShare*wall {
		return nil, nil
	}
	slices.SortFunc(gaps, func(a, b idleGap) int { return cmp.Compare(b.span.Dur(), a.span.Dur()) })
	var picked [][]hostCand
	loop := ix.loopThread()
	for _, g := range gaps[:min(len(gaps), GPUIdleMaxGaps)] {
		picked = append(picked, ix.hostActivity(g.span, t.Steps[g.index].Span, loop))
	}
	cause := dominantCause(picked)
	places := listNames(picked, cause)
	shapeOp := ""
	if cause == CauseHostCode {
		// An op that pays again for each new input shape (a cuDNN plan,
		// a recompile) is not per-step host work to move out of the loop.
		if shapeOp = newShapeCause(t, places); shapeOp != "" {
			for _, ps := range picked {
				for i := range ps {
					if ps[i].name == shapeOp {
						ps[i].cause = CauseNewShape
					}
				}
			}
			cause, places = CauseNewShape, []string{shapeOp}
		}
	}
	// The fix for one cause removes that cause's idle time, not the
	// rest: credit the share of the examined gaps its host work covers.
	for _, g := range gaps[len(picked):min(len(gaps), GPUIdleShareGaps)] {
		picked = append(picked, ix.hostActivity(g.span, t.Steps[g.index].Span, loop))
	}
	tb, rows := idleGapTable(t, gaps, picked)
	credited, examined := causeShare(picked, gaps[:len(picked)], cause)
	whole := idle
	idle *= credited
	var untraced float64
	untracedNote := ""
	clock, err := profilerClockOf(p)
	if err != nil {
		return nil, err
	}
	if share, ok := untracedGapShare(clock, gaps); ok {
		untraced = idle * share
		untracedNote = "; untraced, each gap less the profiler's own host work in it"
	}
	whereText := strings.Join(places, "; ")
	if whereText == "" {
		whereText = "host code between launches"
	}
	return []Finding{{
		Title:            fmt.Sprintf("GPU idle %s per step (%.0f%%) in gaps ≥ %s; the host was in %s", fmtUs(whole), whole/wall*100, LaunchGap, cause),
		Subject:          "long GPU idle gaps: " + cause,
		Severity:         severityByShare(idle / wall),
		SavingUs:         idle,
		UntracedSavingUs: untraced,
		SavingFrom:       FromHostWaits,
		Measures: []Measure{
			{"median step", DurUs(wall)},
			{"long-gap idle per step", DurUs(whole)},
			{"of which in " + cause, DurUs(idle)},
		},
		Evidence: []Evidence{
			{Text: fmt.Sprintf("median step after the first: wall %s, GPU idle in gaps ≥ %s: %s", fmtUs(wall), LaunchGap, fmtUs(whole))},
			{Text: fmt.Sprintf("cause: %s (%s)", cause, whereText)},
			{Text: "longest gaps and what the host was doing:", Table: tb, rowPlaces: rows},
			{Text: fmt.Sprintf("saving model: the long-gap idle time per step (%s) times the share of the %s longest gaps (%s) that %s covers (%.0f%%): "+
				"the rest is other host work this fix does not remove%s", fmtUs(whole), Count(float64(len(picked))), examined, cause, credited*100, untracedNote)},
		},
		Fix:        gpuIdleFix(t, cause, whereText, shapeOp),
		Confidence: Medium,
	}}, nil
}

// longIdleGaps returns the GPU idle gaps of at least LaunchGap in the
// steps after the first (every step when there is one), outside
// torch.compile work, and each step's total of them in µs.
func longIdleGaps(p *Pass) ([]idleGap, []float64) {
	t, ix := p.Trace, p.ix
	compile := mergedSpans(p.compileSpans())
	first := 0
	if len(t.Steps) > 1 {
		first = 1
	}
	var gaps []idleGap
	var buf []trace.Span
	perStep := make([]float64, 0, len(t.Steps)-first)
	for si := first; si < len(t.Steps); si++ {
		st := t.Steps[si]
		var long trace.Duration
		for _, dev := range ix.devices {
			buf = ix.appendIdleGaps(buf[:0], dev, st.Start, st.End)
			gs := buf
			if st.Synthetic && len(gs) > 0 {
				// Without step markers the step is the whole trace: its
				// leading and trailing gaps are the profiler starting and
				// stopping, not the workload.
				if gs[0].Start == st.Start {
					gs = gs[1:]
				}
				if n := len(gs); n > 0 && gs[n-1].End == st.End {
					gs = gs[:n-1]
				}
			}
			for _, g := range gs {
				if g.Dur() < LaunchGap || coveredBy(g, compile) {
					continue
				}
				long += g.Dur()
				gaps = append(gaps, idleGap{g, st.Number, si})
			}
		}
		perStep = append(perStep, us(long))
	}
	return gaps, perStep
}

// idleGapTable lists the longest gaps (those picked) with where the host
// was, and their places on the timeline.
func idleGapTable(t *trace.Trace, gaps []idleGap, picked [][]hostCand) (*Table, []Place) {
	tb := NewTable(Col("step", KindCount), Col("at", KindDuration), Col("gap", KindDuration), Col("host was in", KindName))
	var rows []Place
	for i, g := range gaps[:min(len(gaps), GPUIdleMaxGaps, len(picked))] {
		rows = append(rows, Place{Span: trace.Span{Start: g.span.Start, End: g.span.End}, Device: -1, Stream: -1, What: "the gap"})
		parts := make([]string, 0, len(picked[i]))
		for _, c := range picked[i] {
			parts = append(parts, fmt.Sprintf("%s (%s, %s)", c.name, c.cause, c.overlap))
		}
		if len(parts) == 0 {
			parts = append(parts, "-")
		}
		tb.Add(Count(float64(g.step)), Dur(trace.Duration(g.span.Start-t.Steps[0].Start)), Dur(g.span.Dur()), NameCell(strings.Join(parts, " + ")))
	}
	return tb, rows
}

// gpuIdleFix is the cause's fix; for a per-shape cost, the op's.
func gpuIdleFix(t *trace.Trace, cause, where, shapeOp string) string {
	switch {
	case cause == CauseNewShape:
		return shapeFix(shapeOp)
	case cudaC(t) && (cause == CauseHostCode || cause == CauseRange || cause == CauseBuiltin):
		// A native program: no Python loop, no .item().
		return fmt.Sprintf("the host does other work (%s) while nothing is queued on the GPU: issue the GPU work first and overlap the "+
			"host work with it (asynchronous launches and copies on streams, cudaMemcpyAsync from pinned memory), or move the host "+
			"work to another thread", where)
	}
	return idleFix(cause, where)
}

// untracedGapShare is the share of the long gaps' time left once the
// profiler's own host work in each gap is out (profilerClock.costUs, at
// most the gap's time outside leaf-op work): what the gaps take in the
// untraced program. The profiler's cost sits where the host recorded its
// events, unevenly over the step: a data-loading gap holds nearly all of
// it (loader_feats: 3075 of a step's 3177 ops), so the step-wide
// ProfilerCost.HostFactor would misprice the gap. ok is false without a
// clock (the per-event costs apply to torch.profiler traces only).
func untracedGapShare(clock *profilerClock, gaps []idleGap) (share float64, ok bool) {
	if clock == nil || len(gaps) == 0 {
		return 0, false
	}
	var total, left float64
	for _, g := range gaps {
		d := us(g.span.Dur())
		total += d
		left += max(d-clock.costUs(g.span.Start, g.span.End), 0)
	}
	if total <= 0 {
		return 0, false
	}
	return left / total, true
}

// causeShare returns the share (at most 1) of the examined gaps' time
// during which the host was in cause's work, and that time.
func causeShare(picked [][]hostCand, gaps []idleGap, cause string) (float64, trace.Duration) {
	var total, in trace.Duration
	for i, g := range gaps {
		total += g.span.Dur()
		if i < len(picked) {
			for _, c := range picked[i] {
				if c.cause == cause {
					in += c.overlap
				}
			}
		}
	}
	if total <= 0 {
		return 1, 0
	}
	return min(float64(in)/float64(total), 1), total
}

package diff

import (
	"fmt"
	"math"
	"strings"

	"github.com/tracelens/tracelens/analyze"
)

// UntracedStep is the metric key of the step time the untraced program is
// estimated to take (analyze.ProfilerCost.UntracedPerStepUs): the step
// time less the profiler's own host work where the GPU waited on it. It
// is in Result.Summary, after StepTime, only when both runs have the
// estimate (torch.profiler traces with steps).
const UntracedStep = "untraced_step_us"

// ProfilerShareLimit is the share of a host-bound run's step that the
// profiler's estimated host work may take before diff warns that the
// traced step change need not be the untraced program's. On the recorded
// pairs (fixtures/recorded/pairs) every pair whose traced change missed
// the CUDA-event truth by more than PairTolerancePts had a host-bound side
// above it (alloc_conv 21–28 %, layout_conv 35 %, layout_deep 32–59 %,
// optim_encoder 56–66 %).
const ProfilerShareLimit = 0.2

// profilerShare is the profiler's estimated host work as a share of a
// host-bound run's steady step, 0 for a GPU-bound run (its host work,
// profiler's included, hides under GPU work) or without an estimate.
func profilerShare(a *analyze.Result) float64 {
	c, ss := a.ProfilerCost, &a.StepStats
	if c == nil || ss.SteadyPeriodUs <= 0 || ss.SteadyPeriodBound != analyze.BoundHost {
		return 0
	}
	return c.SteadyOverheadUs / ss.SteadyPeriodUs
}

// profilerLimited reports whether the profiler's host work is over
// ProfilerShareLimit of either run's step (profilerShare).
func profilerLimited(base, next *analyze.Result) bool {
	return max(profilerShare(base), profilerShare(next)) >= ProfilerShareLimit
}

// profilerNote says how much of each host-bound side's step the
// profiler's host work takes: host code runs slower traced, by an amount
// that differs between programs (the overhead model's residuals are
// ±0.76 ms a step), so the traced change can differ from the untraced
// program's in size and even direction (layout_deep: +41 % traced, −37 %
// untraced). Compare adds it when profilerLimited.
func profilerNote(r *Result, base, next *analyze.Result) string {
	sb, sn := profilerShare(base), profilerShare(next)
	var sides []string
	for _, x := range []struct {
		label string
		a     *analyze.Result
		share float64
	}{{"base", base, sb}, {"new", next, sn}} {
		if x.share > 0 {
			sides = append(sides, fmt.Sprintf("%s ~%s of a %s step (%.0f%%)", x.label, FormatTime(x.a.ProfilerCost.SteadyOverheadUs), FormatTime(x.a.StepStats.SteadyPeriodUs), x.share*100))
		}
	}
	est := ""
	if m := r.Metric(UntracedStep); m != nil {
		est = "; untraced estimate " + FormatPct(m.Delta.Pct)
	}
	return fmt.Sprintf("the profiler's own host work is a large part of a host-bound step (%s): host code runs slower traced, so the traced step change (%s%s) can differ from the untraced program's in size and even direction; confirm it with untraced timings (CUDA events) before acting on it",
		strings.Join(sides, ", "), FormatPct(r.StepChange.pct()), est)
}

// pct is the change in percent of the base step time (NaN without a
// base).
func (c *StepChange) pct() float64 {
	if c.BaseUs <= 0 {
		return math.NaN()
	}
	return c.DeltaUs / c.BaseUs * 100
}

// UnsteadySpread is the spread of a run's compared step times (max
// deviation from the median, as a share of it) above which a few steps
// cannot sample the run's period: a DataLoader whose workers deliver
// batches in bursts (loader_conv's new side: steps of 10, 11, 254 and
// 255 ms) completes steps at its mean rate, which 4 steps catch only by
// luck.
const UnsteadySpread = 0.5

// unsteadyNotes says which sides' step times spread beyond
// UnsteadySpread.
func unsteadyNotes(d Delta) []string {
	var notes []string
	for _, side := range []struct {
		label string
		sum   Summary
	}{{"base", d.Base}, {"new", d.New}} {
		if s := side.sum; s.Spread > UnsteadySpread {
			notes = append(notes, fmt.Sprintf("%s's step periods vary ±%.0f%% around their median (%s): its steps come in bursts or stalls, so %d steps sample its period poorly and its step period is uncertain; profile more steps (a longer active window) or time it untraced", side.label, s.Spread*100, FormatTime(s.Median), len(s.Values)))
		}
	}
	return notes
}

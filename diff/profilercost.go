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

// untracedSamples is the untraced step estimate of the compared steps, or
// nil without an estimate.
func untracedSamples(a *analyze.Result, first int) []float64 {
	c := a.ProfilerCost
	if c == nil || len(c.UntracedPerStepUs) != len(a.Steps) || first > len(a.Steps) {
		return nil
	}
	return append([]float64(nil), c.UntracedPerStepUs[first:]...)
}

// untracedMetric is the UntracedStep metric when both runs have the
// estimate, else nothing.
func untracedMetric(base, next *analyze.Result, keepWarmup bool, alpha float64) []Metric {
	ub := untracedSamples(base, firstCompared(len(base.Steps), keepWarmup))
	un := untracedSamples(next, firstCompared(len(next.Steps), keepWarmup))
	if len(ub) == 0 || len(un) == 0 {
		return nil
	}
	return []Metric{{Key: UntracedStep, Name: "step time untraced (est.)", Time: true, Delta: CompareSamples(ub, un, alpha)}}
}

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

// profilerNote warns when the profiler's host work is a large share of a
// host-bound side's step: host code runs slower traced, by an amount that
// differs between programs (the overhead model's residuals are ±0.76 ms a
// step), so the traced change can differ from the untraced program's in
// size and even direction (layout_deep: +41 % traced, −37 % untraced).
// It returns "" when neither side is above ProfilerShareLimit.
func profilerNote(r *Result, base, next *analyze.Result) string {
	sb, sn := profilerShare(base), profilerShare(next)
	if max(sb, sn) < ProfilerShareLimit {
		return ""
	}
	r.ProfilerLimited = true
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

// unsteadyNote says when a side's step times spread beyond
// UnsteadySpread, or "".
func unsteadyNote(label string, d Delta) string {
	for _, s := range []struct {
		side string
		sum  Summary
	}{{"base", d.Base}, {"new", d.New}} {
		if s.side == label && s.sum.Spread > UnsteadySpread {
			return fmt.Sprintf("%s's step times vary ±%.0f%% around their median (%s): its steps come in bursts or stalls, so %d steps sample its period poorly and its step time is uncertain; profile more steps (a longer active window) or time it untraced", label, s.sum.Spread*100, FormatTime(s.sum.Median), len(s.sum.Values))
		}
	}
	return ""
}

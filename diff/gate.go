package diff

import "fmt"

// Gate checks the metrics a CI pipeline guards, step time (the period
// the pipeline completes steps at) and GPU busy time, for a regression larger than thresholdPct percent. failures lists
// the metrics that got worse by more than the threshold (the gate trips
// when it is non-empty): significantly so when the U test could run, or,
// with too few steps for it (common profiler schedules record 3 active
// steps), by their medians alone, saying that significance could not be
// tested: a +400% regression must not pass because a side has 3 steps.
// untested lists the metrics of failures that were judged on medians
// alone, so a pipeline can say so.
func (r *Result) Gate(thresholdPct float64) (failures, untested []string) {
	for _, key := range []string{StepTime, GPUBusy} {
		m := r.Metric(key)
		if m == nil || !(m.Pct > thresholdPct) { // NaN (from zero) is not a gated change
			continue
		}
		what := fmt.Sprintf("%s %s → %s (%s, p=%s n=%d+%d)", m.Name, formatValue(m.Base.Median, m.Time),
			formatValue(m.New.Median, m.Time), FormatPct(m.Pct), FormatP(m.P), len(m.Base.Values), len(m.New.Values))
		switch {
		case m.Significant:
			failures = append(failures, fmt.Sprintf("%s regressed more than %g%%: %s", m.Name, thresholdPct, what))
		case m.Note != "":
			msg := fmt.Sprintf("%s regressed more than %g%% by the medians; significance could not be tested (%s): %s", m.Name, thresholdPct, m.Note, what)
			failures = append(failures, msg)
			untested = append(untested, msg)
		}
	}
	return failures, untested
}

package diff

import "fmt"

// Gate checks the metrics a CI pipeline guards, step wall and GPU busy
// time, for a regression larger than thresholdPct percent. failures lists
// the metrics that got significantly worse by more than the threshold (the
// gate trips when it is non-empty). untested lists those that got worse by
// more than the threshold but could not be tested (too few steps), so
// a pipeline can warn instead of passing silently.
func (r *Result) Gate(thresholdPct float64) (failures, untested []string) {
	for _, key := range []string{StepWall, GPUBusy} {
		m := r.Metric(key)
		if m == nil || !(m.Pct > thresholdPct) { // NaN (from zero) is not a gated change
			continue
		}
		what := fmt.Sprintf("%s %s → %s (%s, p=%.3f n=%d+%d)", m.Name, formatValue(m.Base.Median, m.Time),
			formatValue(m.New.Median, m.Time), FormatPct(m.Pct), m.P, len(m.Base.Values), len(m.New.Values))
		switch {
		case m.Significant:
			failures = append(failures, fmt.Sprintf("%s regressed more than %g%%: %s", m.Name, thresholdPct, what))
		case m.Note != "":
			untested = append(untested, fmt.Sprintf("%s got worse but cannot be tested (%s): %s", m.Name, m.Note, what))
		}
	}
	return failures, untested
}

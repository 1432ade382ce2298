package analyze

import (
	"fmt"
	"math"
	"slices"
	"unicode/utf8"
)

// finish completes a finding an analyzer returned: its ID, saving in
// nanoseconds and as a share of the steady-state step (the saving capped
// at that step: no fix saves more than the step takes), empty lists
// rather than nulls in JSON, and a title of at most MaxTitle characters.
// An evidence table with a row that does not match its columns is a bug
// in the analyzer and an error.
func (p *Pass) finish(f *Finding, id string) error {
	f.ID = id
	if f.Evidence == nil {
		f.Evidence = []Evidence{}
	}
	if f.Measures == nil {
		f.Measures = []Measure{}
	}
	for _, e := range f.Evidence {
		if e.Table == nil {
			continue
		}
		for i, row := range e.Table.Rows {
			if len(row) != len(e.Table.Columns) {
				return fmt.Errorf("finding %q: evidence table row %d has %d cells for %d columns", f.Title, i, len(row), len(e.Table.Columns))
			}
		}
	}
	step := p.Result.StepStats.SteadyWallUs
	if !(f.SavingUs > 0) || math.IsInf(f.SavingUs, 0) {
		f.SavingUs = 0
	}
	if a, what := findingCap(&p.Result.StepStats, f.SavingFrom); step > 0 && f.SavingUs > a {
		text := fmt.Sprintf("the saving model gives %s per step, more than the %s step itself: capped at the step", FormatUs(f.SavingUs), FormatUs(step))
		if a < step {
			text = fmt.Sprintf("the saving model gives %s per step, more than the %s of %s a fix can remove from the %s step (the work that remains still runs): capped there",
				FormatUs(f.SavingUs), FormatUs(a), what, FormatUs(step))
		}
		f.Evidence = append(f.Evidence, Evidence{Text: text})
		f.SavingUs = a
	}
	f.SavingNs = int64(math.Round(f.SavingUs * 1e3))
	f.Share = shareOf(f.SavingUs, step)
	f.Title = clipTitle(f.Title)
	return nil
}

// clipTitle bounds a title to MaxTitle characters. Analyzers write titles
// that fit (tests check every fixture); this only guards traces with
// unusually long names.
func clipTitle(s string) string {
	if utf8.RuneCountInString(s) <= MaxTitle {
		return s
	}
	r := []rune(s)
	return string(r[:MaxTitle-1]) + "…"
}

// SavingFromText names a Finding.SavingFrom in words: "GPU busy",
// "GPU idle (launch gaps)", ...
func SavingFromText(from string) string {
	switch from {
	case FromKernelTime:
		return "GPU busy"
	case FromLaunchGaps:
		return "GPU idle (launch gaps)"
	case FromHostWaits:
		return "GPU idle (long gaps)"
	case FromGPUIdle:
		return "GPU idle"
	}
	return from
}

// removable returns the most of the steady-state step that fixes saving
// out of part from (SavingFrom) can remove, and its name. Idle time can go
// entirely; GPU busy time cannot: the work that remains after a fix (the
// fused kernel, the GEMM in TF32, the copy from pinned memory) still runs,
// at least the step's longest activity (SteadyIrreducibleUs). A part the
// model does not know is bounded by the step less that work.
func removable(ss *StepStats, from string) (float64, string) {
	step := ss.SteadyWallUs
	busy := min(ss.SteadyGPUBusyUs, step)
	floor := min(ss.SteadyIrreducibleUs, busy)
	switch from {
	case FromKernelTime:
		return busy - floor, "GPU busy time"
	case FromLaunchGaps:
		return min(ss.SteadyLaunchGapUs, step), "GPU idle time in launch gaps"
	case FromHostWaits:
		return min(ss.SteadyLongGapUs, step), "GPU idle time in long gaps"
	case FromGPUIdle:
		return min(ss.SteadyGPUIdleUs, step), "GPU idle time"
	}
	return step - floor, "step time"
}

// findingCap bounds one finding's saving per step: a saving out of GPU
// busy time by the busy time less the work that still runs (removable); any
// other by the step. Idle-time savings are not cut to the
// steady step's idle time one by one: some are one-off costs (cold start:
// the first step's idle time, spread over the steps); combineSavings
// bounds them together by the idle time.
func findingCap(ss *StepStats, from string) (float64, string) {
	if from == FromKernelTime {
		return removable(ss, from)
	}
	return ss.SteadyWallUs, "step time"
}

// combineSavings fills Summary.CombinedSavingUs and Result.Overlaps.
// Savings from different parts of the step add up. Savings from one part
// (SavingFrom) overlap: each fix removes its share of what is left of the
// part after the others, so together they remove part × (1 − Π(1 −
// saving/part)), which counts overlaps once and never reaches the whole
// part (no saving does: see removable). GPU idle time in launch gaps, long
// gaps, or either, is one family bounded by the idle time. The total is
// at most the step less the GPU work that still runs after every fix.
func combineSavings(r *Result) {
	ss := &r.StepStats
	step := ss.SteadyWallUs
	idleFamily := func(from string) bool {
		return from == FromLaunchGaps || from == FromHostWaits || from == FromGPUIdle
	}
	type part struct {
		findings []int
		sum      float64
		left     float64 // fraction of the part left after the fixes
	}
	parts := map[string]*part{}
	var order []string
	for i, f := range r.Findings {
		key := f.SavingFrom
		if idleFamily(key) {
			key = FromGPUIdle
		}
		pt := parts[key]
		if pt == nil {
			pt = &part{left: 1}
			parts[key] = pt
			order = append(order, key)
		}
		pt.findings = append(pt.findings, i)
		pt.sum += f.SavingUs
		if a, _ := removable(ss, key); a > 0 {
			pt.left *= 1 - min(f.SavingUs/a, 1)
		}
	}
	var total float64
	r.Overlaps = []Overlap{}
	for _, from := range order {
		pt := parts[from]
		a, _ := removable(ss, from)
		combined := min(pt.sum, a*(1-pt.left))
		total += combined
		if len(pt.findings) > 1 && overlapping(combined, pt.sum) {
			slices.Sort(pt.findings)
			r.Overlaps = append(r.Overlaps, Overlap{SavingFrom: from, Findings: pt.findings, SumUs: pt.sum, AvailableUs: a, CombinedUs: combined})
		}
	}
	if step > 0 {
		total = min(total, step-min(ss.SteadyIrreducibleUs, step))
	}
	r.Summary.CombinedSavingUs = total
	r.Summary.CombinedSavingShare = shareOf(total, step)
}

// overlapping reports whether findings' savings that add up to sum were
// cut to combined: they claim the same time (more than rounding).
func overlapping(combined, sum float64) bool { return sum-combined > 0.0005*sum }

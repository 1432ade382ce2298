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
	if step > 0 && f.SavingUs > step {
		f.Evidence = append(f.Evidence, Evidence{Text: fmt.Sprintf("the saving model gives %s per step, more than the %s step itself: capped at the step",
			FormatUs(f.SavingUs), FormatUs(step))})
		f.SavingUs = step
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

// combineSavings fills Summary.CombinedSavingUs and Result.Overlaps.
// Savings from different parts of the step add up. Savings from one part
// (SavingFrom) overlap: together they save at most the median time that
// part takes per steady-state step (or the largest single saving, whose
// model may use a mean rather than a median). GPU idle time in launch
// gaps, long gaps, or either, is one family: together at most the idle
// time. The total is at most the step.
func combineSavings(r *Result) {
	ss := &r.StepStats
	step := ss.SteadyWallUs
	avail := map[string]float64{
		FromKernelTime: min(ss.SteadyGPUBusyUs, step),
		FromLaunchGaps: min(ss.SteadyLaunchGapUs, step),
		FromHostWaits:  min(ss.SteadyLongGapUs, step),
		FromGPUIdle:    min(ss.SteadyGPUIdleUs, step),
	}
	idleFamily := func(from string) bool {
		return from == FromLaunchGaps || from == FromHostWaits || from == FromGPUIdle
	}
	type part struct {
		findings     []int
		sum, largest float64
	}
	parts := map[string]*part{}
	var order []string
	for i, f := range r.Findings {
		pt := parts[f.SavingFrom]
		if pt == nil {
			pt = &part{}
			parts[f.SavingFrom] = pt
			order = append(order, f.SavingFrom)
		}
		pt.findings = append(pt.findings, i)
		pt.sum += f.SavingUs
		pt.largest = max(pt.largest, f.SavingUs)
	}
	var total, idle, idleSum, idleLargest float64
	var idleFindings []int
	r.Overlaps = []Overlap{}
	for _, from := range order {
		pt := parts[from]
		a, known := avail[from]
		if !known {
			a = step
		}
		combined := min(pt.sum, max(a, pt.largest))
		if idleFamily(from) {
			idle += combined
			idleSum += pt.sum
			idleLargest = max(idleLargest, pt.largest)
			idleFindings = append(idleFindings, pt.findings...)
			continue
		}
		total += combined
		if len(pt.findings) > 1 && overlapping(combined, pt.sum) {
			r.Overlaps = append(r.Overlaps, Overlap{SavingFrom: from, Findings: pt.findings, SumUs: pt.sum, AvailableUs: a, CombinedUs: combined})
		}
	}
	if len(idleFindings) > 0 {
		idle = min(idle, max(avail[FromGPUIdle], idleLargest))
		total += idle
		if len(idleFindings) > 1 && overlapping(idle, idleSum) {
			slices.Sort(idleFindings)
			r.Overlaps = append(r.Overlaps, Overlap{SavingFrom: FromGPUIdle, Findings: idleFindings, SumUs: idleSum, AvailableUs: avail[FromGPUIdle], CombinedUs: idle})
		}
	}
	if step > 0 {
		total = min(total, step)
	}
	r.Summary.CombinedSavingUs = total
	r.Summary.CombinedSavingShare = shareOf(total, step)
}

// overlapping reports whether findings' savings that add up to sum were
// cut to combined: they claim the same time (more than rounding).
func overlapping(combined, sum float64) bool { return sum-combined > 0.0005*sum }

package analyze

import (
	"fmt"
	"math"
	"slices"
	"strings"
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
	if len(f.LedgerLines) == 0 || f.SavingFrom == FromOneOff {
		// An analyzer that knows which lines its fix removes names them;
		// the others draw on the part of the step they save from.
		f.LedgerLines = savingLines(f.SavingFrom)
	}
	if f.splitByAnalyzer {
		// Its saving is GPU time saved plus launch gaps removed (fusion):
		// it draws on busy and idle lines alike.
		f.LedgerLines = append(slices.Clone(gpuBusyLines), gpuIdleLines...)
	}
	if f.SavingFrom == FromOneOff {
		f.OneOffUs, f.SavingUs, f.SavingNs, f.Share = f.SavingUs, 0, 0, 0
		f.Title = clipTitle(f.Title)
		return nil
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
	if f.SavingFrom == FromKernelTime && p.critical != nil && !f.splitByAnalyzer {
		p.onCriticalPath(f)
	}
	p.boundByLedger(f)
	f.SavingNs = int64(math.Round(f.SavingUs * 1e3))
	f.Share = shareOf(f.SavingUs, step)
	f.Title = clipTitle(f.Title)
	return nil
}

// onCriticalPath turns a GPU-time saving into the step time it saves:
// GPUSavingUs keeps the GPU time; SavingUs becomes the part of it on the
// critical path, the saving times the share of the finding's kernels'
// time (those its evidence names; all GPU time when it names none)
// during which the GPU was the bottleneck, and at most the step's
// GPU-bound time. Where that share is small the evidence says why the
// step will not shrink by the GPU time saved.
func (p *Pass) onCriticalPath(f *Finding) {
	var share float64
	if f.activities != nil {
		share = p.critical.shareOfActivities(f.activities)
	} else {
		var names []string
		for _, e := range f.Evidence {
			names = append(names, e.Kernels...)
		}
		share = p.critical.share(names)
	}
	ss := &p.Result.StepStats
	launch := min(max(f.launchUs, 0), f.SavingUs)
	f.GPUSavingUs = f.SavingUs - launch
	gpu := min(f.GPUSavingUs*share, ss.SteadyGPUBoundUs)
	// Launches saved shorten the step where the host is the bottleneck:
	// the complement of the kernels' critical share, within the idle time.
	host := min(launch*(1-share), ss.SteadyGPUIdleUs)
	f.SavingUs = gpu + host
	if f.SavingUs < f.GPUSavingUs {
		// The analyzer judged the GPU time; the step gains less.
		f.Severity = lowerSeverity(f.Severity, severityByShare(shareOf(f.SavingUs, ss.SteadyWallUs)))
	}
	if share < CriticalNoteBelow && f.GPUSavingUs > 0 {
		text := fmt.Sprintf("the GPU is the bottleneck for only %.0f%% of these kernels' time: for the rest the host queues the next kernel after they end, "+
			"so of the %s of GPU time the fix saves per step, %s shortens the step and the rest becomes GPU idle time (remove the launch "+
			"and host overhead first for the full saving)", share*100, FormatUs(f.GPUSavingUs), FormatUs(gpu))
		if launch > 0 {
			text += fmt.Sprintf("; the %s of launch calls it removes per step shorten it by %s", FormatUs(launch), FormatUs(host))
		}
		f.Evidence = append(f.Evidence, Evidence{Text: text})
	}
	f.Measures = append(f.Measures,
		Measure{"GPU time saved per step", DurUs(f.GPUSavingUs)},
		Measure{"share of these kernels' time the GPU is the bottleneck", Percent(share)})
}

// boundByLedger caps a saving at the steady step's time in the ledger
// lines it draws on: no fix removes more idle time than the GPU is idle
// for host reasons, or more busy time than the step's own work takes.
func (p *Pass) boundByLedger(f *Finding) {
	ss := &p.Result.StepStats
	if len(ss.SteadyLedger) == 0 || len(f.LedgerLines) == 0 {
		return
	}
	avail := LedgerUs(ss.SteadyLedger, f.LedgerLines...)
	if f.SavingUs <= avail {
		return
	}
	f.Evidence = append(f.Evidence, Evidence{Text: fmt.Sprintf("the saving model gives %s per step, more than the %s the steady step spends in %s: capped there",
		FormatUs(f.SavingUs), FormatUs(avail), ledgerLinesText(f.LedgerLines))})
	f.SavingUs = avail
}

// ledgerLinesText lists ledger lines in words.
func ledgerLinesText(lines []string) string {
	words := make([]string, len(lines))
	for i, l := range lines {
		words[i] = LedgerLineText(l)
	}
	return strings.Join(words, ", ")
}

// CriticalNoteBelow is the critical-path share below which a GPU-time
// finding explains that its saving shrinks the step less than the GPU
// time it saves.
const CriticalNoteBelow = 0.9

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
	case FromOneOff:
		return "one-time cost"
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
		// Only GPU time during which the GPU is the bottleneck shortens
		// the step (onCriticalPath).
		return min(busy-floor, max(ss.SteadyGPUBoundUs, 0)), "GPU busy time on the critical path"
	case FromLaunchGaps:
		return min(ss.SteadyLaunchGapUs, step, hostIdle(ss)), "GPU idle time in launch gaps"
	case FromHostWaits:
		return min(ss.SteadyLongGapUs, step, hostIdle(ss)), "GPU idle time in long gaps"
	case FromGPUIdle:
		return min(ss.SteadyGPUIdleUs, step, hostIdle(ss)), "GPU idle time"
	}
	return step - floor, "step time"
}

// hostIdle is the steady step's time in the ledger's GPU-idle lines: the
// idle time host fixes can remove (not the GPU busy with other steps'
// work or work queued before profiling). Without a ledger, the step.
func hostIdle(ss *StepStats) float64 {
	if len(ss.SteadyLedger) == 0 {
		return ss.SteadyWallUs
	}
	return LedgerUs(ss.SteadyLedger, gpuIdleLines...)
}

// findingCap bounds one finding's saving per step: a saving out of GPU
// busy time by the busy time less the work that still runs (removable); any
// other by the step. Idle-time savings are not cut to the
// steady step's idle time one by one: some are one-off costs (cold start:
// the first step's idle time, spread over the steps); combineSavings
// bounds them together by the idle time.
func findingCap(ss *StepStats, from string) (float64, string) {
	if from == FromKernelTime {
		// The GPU time saved, before onCriticalPath turns it into step
		// time: at most the busy time less the work that still runs.
		busy := min(ss.SteadyGPUBusyUs, ss.SteadyWallUs)
		return busy - min(ss.SteadyIrreducibleUs, busy), "GPU busy time"
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
		if f.SavingFrom == FromOneOff {
			continue // nothing per step
		}
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
	if len(ss.SteadyLedger) > 0 {
		// Together the fixes remove at most the ledger lines they draw on.
		var named []string
		for _, f := range r.Findings {
			for _, l := range f.LedgerLines {
				if !slices.Contains(named, l) {
					named = append(named, l)
				}
			}
		}
		total = min(total, LedgerUs(ss.SteadyLedger, named...))
	}
	r.Summary.CombinedSavingUs = total
	r.Summary.CombinedSavingShare = shareOf(total, step)
}

// overlapping reports whether findings' savings that add up to sum were
// cut to combined: they claim the same time (more than rounding).
func overlapping(combined, sum float64) bool { return sum-combined > 0.0005*sum }

// rankUs is the figure findings are ranked by: the saving per step, or for
// a one-time cost that cost spread over the steps traced (at most the
// step), so a compilation that dominates the trace still leads it.
func rankUs(f *Finding, ss *StepStats) float64 {
	if f.SavingFrom != FromOneOff {
		return f.SavingUs
	}
	v := f.OneOffUs / float64(max(ss.Count, 1))
	if ss.SteadyWallUs > 0 {
		v = min(v, ss.SteadyWallUs)
	}
	return v
}

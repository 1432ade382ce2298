package analyze

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"
)

// enforceInvariants makes figures that cannot be true impossible to print.
// Each is a bug somewhere upstream (a FLOP count attributed to the wrong
// kernel, a share over the wrong whole); rather than print it, Run removes
// or bounds it and says so in Result.Corrections, which tests require to
// be empty on every fixture and the fuzz corpus:
//
//   - a roofline row achieving more FLOP/s or bytes/s than the device's
//     peak for its dtype is not shown;
//   - every share is within [0, 1];
//   - every GPU activity is in exactly one known category (the category
//     counts add up to the activities);
//   - no finding saves more than the steady-state step, and neither do
//     all of them together; a saving out of GPU busy time shortens the step
//     by at most its GPU-bound time (plus idle time for the launches it
//     removes): Check verifies it.
func enforceInvariants(r *Result, activities int) {
	fix := func(format string, a ...any) { r.Corrections = append(r.Corrections, fmt.Sprintf(format, a...)) }
	boundRoofline(r, fix)
	boundKernels(r, activities, fix)
	boundLedgers(r, fix)
	boundStepStats(r, fix)
	capFindings(r, fix)
}

// boundRoofline leaves out the roofline rows above the device's peaks.
func boundRoofline(r *Result, fix func(string, ...any)) {
	kept := r.Roofline[:0]
	for _, row := range r.Roofline {
		switch {
		case row.PeakTFLOPS > 0 && !(row.TFLOPS <= row.PeakTFLOPS):
			fix("roofline row %s %s (%s) not shown: %.4g TFLOP/s is above the device's %s peak of %.4g TFLOP/s (the FLOPs or the time were attributed wrongly)",
				row.Op, row.Shape, ShortKernelName(row.Kernel), row.TFLOPS, row.DType, row.PeakTFLOPS)
		case row.PeakGBps > 0 && !(row.GBps <= row.PeakGBps):
			fix("roofline row %s %s (%s) not shown: %.4g GB/s is above the device's peak of %.4g GB/s (the bytes or the time were attributed wrongly)",
				row.Op, row.Shape, ShortKernelName(row.Kernel), row.GBps, row.PeakGBps)
		default:
			row.Efficiency = clampShare(row.Efficiency, "roofline "+row.Op+" efficiency", fix)
			kept = append(kept, row)
		}
	}
	r.Roofline = kept
}

// boundKernels clamps the kernels' and categories' shares and checks that
// the categories count every GPU activity once.
func boundKernels(r *Result, activities int, fix func(string, ...any)) {
	for i := range r.Kernels {
		k := &r.Kernels[i]
		k.Share = clampShare(k.Share, "kernel "+k.ShortName+" share", fix)
		k.CumulativeShare = clampShare(k.CumulativeShare, "kernel "+k.ShortName+" cumulative share", fix)
	}
	known := Categories()
	counted := 0
	for i := range r.Categories {
		c := &r.Categories[i]
		c.Share = clampShare(c.Share, "category "+c.Category+" share", fix)
		if !slices.Contains(known, c.Category) {
			fix("category %q is not one of the known categories", c.Category)
		}
		counted += c.Count
	}
	if counted != activities {
		fix("categories count %d GPU activities of %d: each must be in exactly one", counted, activities)
	}
}

// boundLedgers checks every step's ledger and cuts a finding's saving to
// the ledger lines it draws on.
func boundLedgers(r *Result, fix func(string, ...any)) {
	for i := range r.Steps {
		s := &r.Steps[i]
		s.GPUBusyShare = clampShare(s.GPUBusyShare, fmt.Sprintf("step %d GPU busy share", s.Number), fix)
		if err := checkLedger(s.Ledger, s.WallUs); err != nil {
			fix("step %d: %v", s.Number, err)
		}
	}
	if err := checkLedger(r.StepStats.SteadyLedger, r.StepStats.SteadyWallUs); err != nil && len(r.Steps) > 0 {
		fix("steady step: %v", err)
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		if avail := LedgerUs(r.StepStats.SteadyLedger, f.LedgerLines...); len(f.LedgerLines) > 0 && f.SavingUs > avail*(1+1e-9)+1e-6 {
			fix("finding %s saves %.3f µs per step, more than the %.3f µs of the ledger lines it draws on: cut to them", f.ID, f.SavingUs, avail)
			f.SavingUs = avail
		}
	}
}

// boundStepStats clamps the summary's and step statistics' shares.
func boundStepStats(r *Result, fix func(string, ...any)) {
	s := &r.Summary
	s.GPUBusyShare = clampShare(s.GPUBusyShare, "GPU busy share", fix)
	ss := &r.StepStats
	for _, v := range stepShares(ss) {
		*v.p = clampShare(*v.p, v.what, fix)
	}
	for i := range r.SameWork {
		w := &r.SameWork[i]
		w.FastEfficiency = clampShare(w.FastEfficiency, "roofline "+w.Fast+" efficiency", fix)
		w.SlowEfficiency = clampShare(w.SlowEfficiency, "roofline "+w.Slow+" efficiency", fix)
	}
	r.Launches.ShortKernelShare = clampShare(r.Launches.ShortKernelShare, "short-kernel share", fix)
}

// capFindings caps each finding's saving, and all of them together, at
// the steady step.
func capFindings(r *Result, fix func(string, ...any)) {
	s := &r.Summary
	step := r.StepStats.SteadyWallUs
	for i := range r.Findings {
		f := &r.Findings[i]
		f.Share = clampShare(f.Share, "finding "+f.ID+" share", fix)
		if step > 0 && f.SavingUs > step {
			fix("finding %s saves %s, more than the %s step: capped", f.ID, FormatUs(f.SavingUs), FormatUs(step))
			f.SavingUs, f.SavingNs, f.Share = step, int64(math.Round(step*1e3)), 1
		}
	}
	if step > 0 && s.CombinedSavingUs > step {
		fix("all findings together save %s, more than the %s step: capped", FormatUs(s.CombinedSavingUs), FormatUs(step))
		s.CombinedSavingUs = step
	}
	s.CombinedSavingShare = clampShare(s.CombinedSavingShare, "combined saving share", fix)
}

// checkLedger verifies that a ledger lists every line once, in order,
// with non-negative times adding up to wall (within 0.1 %).
func checkLedger(l []LedgerEntry, wall float64) error {
	lines := LedgerLines()
	if len(l) != len(lines) {
		return fmt.Errorf("ledger has %d lines, want %d", len(l), len(lines))
	}
	var sum float64
	for i, e := range l {
		if e.Line != lines[i] || !(e.Us >= 0) {
			return fmt.Errorf("ledger line %d is %q %.3f µs, want %q ≥ 0", i, e.Line, e.Us, lines[i])
		}
		sum += e.Us
	}
	if math.Abs(sum-wall) > 0.001*wall+1e-6 {
		return fmt.Errorf("ledger lines add up to %.3f µs, the wall is %.3f µs", sum, wall)
	}
	return nil
}

// clampShare returns v within [0, 1], reporting through fix a value that
// was not (NaN becomes 0).
func clampShare(v float64, what string, fix func(string, ...any)) float64 {
	if v >= 0 && v <= 1 {
		return v
	}
	if v > 1 && v <= 1+1e-9 {
		return 1 // a whole summed in another order: rounding, not a bug
	}
	fix("%s was %v, outside 0–100%%", what, v)
	if v > 1 {
		return 1
	}
	return 0
}

// Check verifies the invariants on a Result (one from Run, or read back
// from JSON) and returns every violation, joined; nil when it holds them
// all. Tests run it over every fixture and the fuzz corpus.
func Check(r *Result) error {
	ck := &checker{}
	ck.roofline(r)
	ck.kernels(r)
	ck.steps(r)
	ck.stepStats(r)
	ck.findings(r)
	checkFigures(r, ck.bad)
	return errors.Join(ck.errs...)
}

// checker collects Check's violations.
type checker struct {
	errs []error
}

// bad records a violation.
func (ck *checker) bad(format string, a ...any) { ck.errs = append(ck.errs, fmt.Errorf(format, a...)) }

// share records a share outside [0, 1].
func (ck *checker) share(v float64, what string) {
	if !(v >= 0 && v <= 1) {
		ck.bad("%s = %v, outside [0, 1]", what, v)
	}
}

// roofline checks that no row passes the device's peaks.
func (ck *checker) roofline(r *Result) {
	for _, row := range r.Roofline {
		if row.PeakTFLOPS > 0 && !(row.TFLOPS <= row.PeakTFLOPS) {
			ck.bad("roofline %s %s: %v TFLOP/s above the %s peak %v", row.Op, row.Shape, row.TFLOPS, row.DType, row.PeakTFLOPS)
		}
		if row.PeakGBps > 0 && !(row.GBps <= row.PeakGBps) {
			ck.bad("roofline %s %s: %v GB/s above the peak %v", row.Op, row.Shape, row.GBps, row.PeakGBps)
		}
		ck.share(row.Efficiency, "roofline "+row.Op+" efficiency")
	}
}

// kernels checks the kernels' shares and categories.
func (ck *checker) kernels(r *Result) {
	known := Categories()
	for _, k := range r.Kernels {
		ck.share(k.Share, "kernel "+k.Name+" share")
		ck.share(k.CumulativeShare, "kernel "+k.Name+" cumulative share")
		if !slices.Contains(known, k.Category) {
			ck.bad("kernel %s in unknown category %q", k.Name, k.Category)
		}
	}
	for _, c := range r.Categories {
		ck.share(c.Share, "category "+c.Category+" share")
	}
}

// steps checks each step's share, ledger and period, and that steps do not
// overlap.
func (ck *checker) steps(r *Result) {
	for i, s := range r.Steps {
		ck.share(s.GPUBusyShare, fmt.Sprintf("step %d GPU busy share", s.Number))
		// A step ends where the next begins (host intervals; a step's
		// GPU window may run later).
		if err := checkLedger(s.Ledger, s.WallUs); err != nil {
			ck.bad("step %d: %v", s.Number, err)
		}
		if err := checkPeriod(&s); err != nil {
			ck.bad("step %d: %v", s.Number, err)
		}
		if i > 0 && r.Steps[i-1].StartUs+r.Steps[i-1].HostWallUs > s.StartUs+1e-3 {
			ck.bad("step %d (%vµs from %vµs) overlaps step %d starting at %vµs", r.Steps[i-1].Number, r.Steps[i-1].HostWallUs,
				r.Steps[i-1].StartUs, s.Number, s.StartUs)
		}
	}
}

// stepStats checks the summary and step statistics: shares, the steady
// ledger and the savings drawn on it, the spread of step times, the
// warm-up verdict, the top range and the same-work comparisons.
func (ck *checker) stepStats(r *Result) {
	ck.share(r.Summary.GPUBusyShare, "GPU busy share")
	ss := r.StepStats
	if len(r.Steps) > 0 {
		if err := checkLedger(ss.SteadyLedger, ss.SteadyWallUs); err != nil {
			ck.bad("steady step: %v", err)
		}
	}
	for _, f := range r.Findings {
		// A saving draws on ledger lines and cannot exceed them. A run's
		// cross-rank finding names the described rank's lines it gains
		// from, but its saving is the run's figure (over every waiting
		// rank), bounded by distributed.
		if f.crossRank {
			continue
		}
		if avail := LedgerUs(ss.SteadyLedger, f.LedgerLines...); len(f.LedgerLines) > 0 && f.SavingUs > avail*(1+1e-9)+1e-6 {
			ck.bad("finding %s saves %v µs per step, more than the %v µs of its ledger lines %v", f.ID, f.SavingUs, avail, f.LedgerLines)
		}
	}
	for _, v := range stepShares(&ss) {
		ck.share(*v.p, v.what)
	}
	if len(r.Steps) > 0 && !(0 <= ss.MinWallUs && ss.MinWallUs <= ss.MedianWallUs && ss.MedianWallUs <= ss.MaxWallUs && ss.WallSpread >= 0) {
		ck.bad("step times: min %v, median %v, max %v, spread %v: want 0 ≤ min ≤ median ≤ max and spread ≥ 0", ss.MinWallUs, ss.MedianWallUs, ss.MaxWallUs, ss.WallSpread)
	}
	if !(ss.FirstStepRatio >= 0) || ss.WarmUp != (ss.FirstStepRatio > WarmUpRatio) {
		ck.bad("first step ratio %v with warm-up %v", ss.FirstStepRatio, ss.WarmUp)
	}
	if tr := r.TopRange; tr != nil && !(tr.GPUUs >= TopRangeLead*tr.NextGPUUs && tr.Ratio >= TopRangeLead) {
		ck.bad("top range %s: %vµs against %vµs, ratio %v below %v", tr.Name, tr.GPUUs, tr.NextGPUUs, tr.Ratio, TopRangeLead)
	}
	for _, w := range r.SameWork {
		ck.share(w.FastEfficiency, "roofline "+w.Fast+" efficiency")
		ck.share(w.SlowEfficiency, "roofline "+w.Slow+" efficiency")
		if !(w.Speedup >= SameWorkGap && w.FastTFLOPS >= w.SlowTFLOPS) {
			ck.bad("same work %s %s: %v vs %v TFLOP/s, speedup %v", w.Shape, w.DType, w.FastTFLOPS, w.SlowTFLOPS, w.Speedup)
		}
	}
	ck.share(r.Launches.ShortKernelShare, "short-kernel share")
	ck.share(r.Summary.CombinedSavingShare, "combined saving share")
}

// findings checks each finding's saving against the step, the GPU time it
// can shorten and its kind, the combined saving and the overlaps.
func (ck *checker) findings(r *Result) {
	step := r.StepStats.SteadyWallUs
	var sum float64
	for _, f := range r.Findings {
		ck.share(f.Share, "finding "+f.ID+" share")
		if !(f.SavingUs >= 0) || step > 0 && f.SavingUs > step {
			ck.bad("finding %s saves %vµs of a %vµs step", f.ID, f.SavingUs, step)
		}
		if ss := r.StepStats; f.SavingFrom == FromKernelTime && step > 0 && f.SavingUs > ss.SteadyGPUBoundUs+ss.SteadyGPUIdleUs+1e-6 {
			// GPU time saved shortens the step only where the GPU is the
			// bottleneck; launches removed only where it idles.
			ck.bad("finding %s saves %vµs out of GPU busy time: more than the GPU-bound %vµs plus the idle %vµs", f.ID, f.SavingUs, ss.SteadyGPUBoundUs, ss.SteadyGPUIdleUs)
		}
		if f.SavingFrom == FromOneOff && (f.SavingUs != 0 || f.Share != 0 || !(f.OneOffUs >= 0)) || f.SavingFrom != FromOneOff && f.OneOffUs != 0 {
			ck.bad("finding %s: a one-time cost is not a saving per step (saving %vµs, one-off %vµs, from %s)", f.ID, f.SavingUs, f.OneOffUs, f.SavingFrom)
		}
		if f.GPUSavingUs < 0 || f.SavingFrom != FromKernelTime && f.GPUSavingUs != 0 {
			ck.bad("finding %s: GPU saving %vµs (saving from %s)", f.ID, f.GPUSavingUs, f.SavingFrom)
		}
		if utf8.RuneCountInString(f.Title) > MaxTitle {
			ck.bad("finding %s: title longer than %d characters", f.ID, MaxTitle)
		}
		sum += f.SavingUs
	}
	if c := r.Summary.CombinedSavingUs; !(c >= 0) || step > 0 && c > step || c > sum*(1+1e-9)+1e-9 {
		ck.bad("combined saving %vµs: want within [0, min(step %v, sum of savings %v)]", c, step, sum)
	}
	for _, o := range r.Overlaps {
		if o.CombinedUs > o.SumUs*(1+1e-9) || len(o.Findings) < 2 {
			ck.bad("overlap %s: combined %v over %d findings summing to %v", o.SavingFrom, o.CombinedUs, len(o.Findings), o.SumUs)
		}
		for _, i := range o.Findings {
			if i < 0 || i >= len(r.Findings) {
				ck.bad("overlap %s names finding %d of %d", o.SavingFrom, i, len(r.Findings))
			}
		}
	}
}

// namedShare is a share in a Result and what it is, for messages.
type namedShare struct {
	p    *float64
	what string
}

// stepShares returns the step statistics' shares: Check checks them and
// enforceInvariants clamps them.
func stepShares(ss *StepStats) []namedShare {
	return []namedShare{
		{&ss.SteadyGPUBusyShare, "steady-state GPU busy share"},
		{&ss.SteadyGPUIdleShare, "steady-state GPU idle share"},
		{&ss.SteadyComputeShare, "steady-state compute share"},
		{&ss.SteadyLaunchAPIIdleShare, "launch calls' share of idle"},
		{&ss.ForwardShare, "forward share"},
		{&ss.BackwardShare, "backward share"},
		{&ss.OptimizerShare, "optimizer share"},
		{&ss.Median.GPUBusyShare, "median step's GPU busy share"},
		{&ss.MedianNoFirst.GPUBusyShare, "median step's GPU busy share (after the first)"},
	}
}

package diff

import (
	"fmt"
	"math"
	"slices"

	"github.com/tracelens/tracelens/analyze"
)

// Metric keys of the step time and the two periods it is the longer of
// (analyze.Step.PeriodUs, HostPeriodUs, GPUPeriodUs), in Result.Summary
// before the step wall.
const (
	// StepTime is the step as the user experiences it: the period at
	// which the pipeline completes steps (the GPU period for a host-ahead
	// run, the host period for a GPU-starved one). Step walls, measured
	// from the host's step boundaries, time a host-ahead run's launches
	// plus work queued behind earlier steps instead.
	StepTime   = "step_time_us"
	HostPeriod = "host_period_us"
	GPUPeriod  = "gpu_period_us"
)

// LineWallExcess is the StepChange line that reconciles the ledger, which
// splits each step's wall, with the step time: the step time minus the
// wall (negative when the wall holds work queued behind earlier steps, as
// in a host-ahead run).
const LineWallExcess = "step_time_minus_wall"

// ResolvedShare is the part of its predicted saving a finding's ledger
// lines must give back for a finding gone from NEW to count as resolved.
const ResolvedShare = 0.5

// StepChange is the steady step time's change split into the step
// ledger's lines (analyze.StepStats.SteadyLedger of both runs): the lines'
// deltas add up to DeltaUs exactly.
type StepChange struct {
	// BaseUs and NewUs are each run's steady step time
	// (analyze.StepStats.SteadyPeriodUs), DeltaUs new minus base.
	BaseUs, NewUs, DeltaUs float64
	// LoUs and HiUs bound DeltaUs by the extremes of the steady steps'
	// step times: the fastest new step minus the slowest base step, and
	// the slowest new minus the fastest base.
	LoUs, HiUs float64
	// BaseBound and NewBound say which side set each run's step time
	// (analyze.BoundGPU, analyze.BoundHost).
	BaseBound, NewBound string
	// Lines are the ledger lines in analyze.LedgerLines order, then
	// LineWallExcess; lines zero on both sides are left out.
	Lines []LineChange
}

// LineChange is one ledger line's share of the step-time change.
type LineChange struct {
	Line string
	// Text names the line in words (analyze.LedgerLineText).
	Text string
	// BaseUs and NewUs are the line in each run's steady step, DeltaUs
	// new minus base; LoUs and HiUs bound it by the extremes of the line
	// over each run's steady steps (as StepChange's).
	BaseUs, NewUs, DeltaUs float64
	LoUs, HiUs             float64
}

// decompose splits the steady step time's change into ledger lines. Each
// run's steady ledger adds up to its steady wall; the LineWallExcess line
// (step time minus wall) carries each side from its wall to its step time,
// so the lines sum to the step time on each side and their deltas to the
// change.
func decompose(base, next *analyze.Result) StepChange {
	bs, ns := &base.StepStats, &next.StepStats
	c := StepChange{BaseUs: bs.SteadyPeriodUs, NewUs: ns.SteadyPeriodUs,
		BaseBound: bs.SteadyPeriodBound, NewBound: ns.SteadyPeriodBound}
	c.DeltaUs = c.NewUs - c.BaseUs
	c.LoUs, c.HiUs = changeRange(base, next, func(s *analyze.Step) float64 { return s.PeriodUs })
	for _, line := range analyze.LedgerLines() {
		lc := LineChange{Line: line, Text: analyze.LedgerLineText(line),
			BaseUs: analyze.LedgerUs(bs.SteadyLedger, line), NewUs: analyze.LedgerUs(ns.SteadyLedger, line)}
		lc.LoUs, lc.HiUs = changeRange(base, next, func(s *analyze.Step) float64 { return analyze.LedgerUs(s.Ledger, line) })
		c.add(lc)
	}
	ex := LineChange{Line: LineWallExcess, Text: "step period − wall (queued work, host period)",
		BaseUs: bs.SteadyPeriodUs - bs.SteadyWallUs, NewUs: ns.SteadyPeriodUs - ns.SteadyWallUs}
	ex.LoUs, ex.HiUs = changeRange(base, next, func(s *analyze.Step) float64 { return s.PeriodUs - s.WallUs })
	c.add(ex)
	return c
}

// add appends a line, unless it is zero on both sides.
func (c *StepChange) add(lc LineChange) {
	lc.DeltaUs = lc.NewUs - lc.BaseUs
	if math.Abs(lc.BaseUs) < 0.05 && math.Abs(lc.NewUs) < 0.05 {
		return
	}
	c.Lines = append(c.Lines, lc)
}

// changeRange bounds a per-step figure's change between the runs' steady
// steps: the smallest new value minus the largest base one, and the
// largest new minus the smallest base.
func changeRange(base, next *analyze.Result, f func(*analyze.Step) float64) (lo, hi float64) {
	values := func(a *analyze.Result) []float64 {
		steps := a.Steps
		if len(steps) > 1 {
			steps = steps[1:]
		}
		v := make([]float64, len(steps))
		for i := range steps {
			v[i] = f(&steps[i])
		}
		return v
	}
	b, n := values(base), values(next)
	if len(b) == 0 || len(n) == 0 {
		return 0, 0
	}
	return slices.Min(n) - slices.Max(b), slices.Max(n) - slices.Min(b)
}

// PctRange is the change's interval in percent of the base step time:
// LoUs and HiUs over BaseUs (NaN, NaN without a base).
func (c *StepChange) PctRange() (lo, hi float64) {
	if c.BaseUs <= 0 {
		return math.NaN(), math.NaN()
	}
	return c.LoUs / c.BaseUs * 100, c.HiUs / c.BaseUs * 100
}

// judgeResolved measures, for every finding of BASE that NEW resolved or
// still has, the change of the ledger lines its saving named (its
// delivered saving, next to the predicted one), and moves a finding gone
// from NEW whose lines gave back less than ResolvedShare of its prediction
// to Unreported: what it measured is still there. Whether the same kernels
// ran does not matter: a copy, sync or host fix changes no kernel.
func judgeResolved(f *Findings, base, next *analyze.Result) {
	measured := len(base.StepStats.SteadyLedger) > 0 && len(next.StepStats.SteadyLedger) > 0
	deliver := func(c *FindingChange) {
		if !measured || c.OneOff || len(c.LedgerLines) == 0 {
			return
		}
		c.Measured = true
		c.DeliveredUs = analyze.LedgerUs(base.StepStats.SteadyLedger, c.LedgerLines...) -
			analyze.LedgerUs(next.StepStats.SteadyLedger, c.LedgerLines...)
		if c.BaseSavingUs > 0 {
			c.DeliveredRatio = c.DeliveredUs / c.BaseSavingUs
		}
	}
	for i := range f.Persisting {
		deliver(&f.Persisting[i])
	}
	resolved := f.Resolved[:0:0]
	for _, c := range f.Resolved {
		deliver(&c)
		c.SubjectGone = opGone(c.Subject, base, next)
		if c.Measured && c.DeliveredUs < ResolvedShare*c.BaseSavingUs && !c.SubjectGone {
			f.Unreported = append(f.Unreported, c)
			continue
		}
		resolved = append(resolved, c)
	}
	f.Resolved = resolved
}

// opGone reports whether name is an op that ran in base's compared steps
// (the first dropped, as the step metrics do) and in none of next's.
func opGone(name string, base, next *analyze.Result) bool {
	calls := func(r *analyze.Result) (n int, found bool) {
		for i := range r.Ops {
			o := &r.Ops[i]
			if o.Name != name {
				continue
			}
			per := o.PerStep
			if len(per) > 1 {
				per = per[1:]
			}
			for _, s := range per {
				n += s.Count
			}
			return n, true
		}
		return 0, false
	}
	b, ok := calls(base)
	if !ok || b == 0 || len(next.Steps) == 0 {
		return false
	}
	n, _ := calls(next)
	return n == 0
}

// boundText says which side sets a run's step time.
func boundText(bound string) string {
	if bound == analyze.BoundGPU {
		return "step bound by the GPU"
	}
	return "step bound by the host"
}

// stepChangeTables lays out the step change by ledger line and the
// predicted-vs-delivered check of the base run's findings, for Markdown
// and text.
func (r *Result) stepChangeTables() []table {
	c := &r.StepChange
	if len(c.Lines) == 0 {
		return nil
	}
	lo, hi := c.PctRange()
	t := table{title: fmt.Sprintf("Step period change by ledger line (steady step; %s → %s, %s; interval from the steps' extremes)",
		FormatTime(c.BaseUs), FormatTime(c.NewUs), signedTime(c.DeltaUs)),
		header: []string{"line", "base", "new", "change", "interval"}, right: []bool{false, true, true, true, true}}
	for _, l := range c.Lines {
		t.rows = append(t.rows, []string{l.Text, savedTime(l.BaseUs), savedTime(l.NewUs), signedTime(l.DeltaUs),
			signedTime(l.LoUs) + " … " + signedTime(l.HiUs)})
	}
	t.rows = append(t.rows, []string{"total (step period)", FormatTime(c.BaseUs), FormatTime(c.NewUs), signedTime(c.DeltaUs),
		fmt.Sprintf("%s … %s", FormatPct(lo), FormatPct(hi))})
	out := []table{t}
	p := table{title: "Predicted vs delivered (each BASE finding's saving against the change of the ledger lines it named, in the traced runs)",
		header: []string{"finding", "status", "predicted", "delivered", "delivered/predicted"}, right: []bool{false, false, true, true, true}, code: true}
	for _, g := range []struct {
		status string
		fs     []FindingChange
	}{{"resolved", r.Findings.Resolved}, {"persisting", r.Findings.Persisting}, {"not resolved", r.Findings.Unreported}} {
		for _, f := range g.fs {
			if !f.Measured {
				continue
			}
			ratio := "—"
			if f.BaseSavingUs > 0 {
				ratio = fmt.Sprintf("%.0f%%", f.DeliveredRatio*100)
			}
			// The untraced prediction beside the traced one, where they
			// differ: it is what the fix gives the program run without
			// the profiler, and what the saving models are calibrated on.
			predicted := FormatTime(f.BaseSavingUs)
			if u := f.BaseUntracedSavingUs; u > 0 && FormatTime(u) != predicted {
				predicted += fmt.Sprintf(" (~%s untraced)", FormatTime(u))
			}
			status := g.status
			switch {
			case f.Reduced:
				status = "reduced"
			case f.SubjectGone:
				status = "resolved (op gone)"
			}
			p.rows = append(p.rows, []string{f.ID + " " + f.Subject, status, predicted, savedTime(f.DeliveredUs), ratio})
		}
	}
	if len(p.rows) > 0 {
		out = append(out, p)
	}
	return out
}

// savedTime prints µs with a true minus sign when negative (a saving
// that turned into a loss, the step time below its wall).
func savedTime(us float64) string {
	if us < 0 {
		return "−" + FormatTime(-us)
	}
	return FormatTime(us)
}

// signedTime prints a change in µs with its sign ("−4.10 ms", "+12.0 µs").
func signedTime(us float64) string {
	if us < 0 {
		return "−" + FormatTime(-us)
	}
	return "+" + FormatTime(us)
}

// deliveredText is ", ~1.30 ms untraced" where the base prediction for the
// untraced program differs from the traced one, then "; its ledger lines
// gave back 3.90 ms, 95 % of it" for a measured finding.
func deliveredText(f FindingChange) string {
	// The base prediction for the untraced program, where it differs:
	// what untraced timings of the fix compare with.
	s := ""
	if u := f.BaseUntracedSavingUs; u > 0 && FormatTime(u) != FormatTime(f.BaseSavingUs) {
		s = fmt.Sprintf(", ~%s untraced", FormatTime(u))
	}
	if f.SubjectGone {
		s += fmt.Sprintf("; %s no longer runs", f.Subject)
	}
	if !f.Measured || f.BaseSavingUs <= 0 {
		return s
	}
	return s + fmt.Sprintf("; its ledger lines gave back %s, %.0f%% of it", savedTime(f.DeliveredUs), f.DeliveredRatio*100)
}

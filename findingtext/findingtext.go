// Package findingtext words a finding for the faces that print text: the
// CLI (findings, demo, a run's findings) and the TUI's finding detail use
// these functions, so a finding's saving reads the same in each (a
// host-bound GEMM's advice says "saves ~0 of the step while the host is
// the bottleneck" everywhere, a one-time cost is never quoted per step)
// and every string from the trace is sanitized for the terminal.
package findingtext

import (
	"fmt"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/termtext"
)

// Saving is what fixing f, one of r's findings, saves, as the clause
// after its severity and confidence: per step (Per), once, or nothing
// while something else limits the step (analyze's LimitedBy).
func Saving(r *analyze.Result, f *analyze.Finding) string {
	per := Per(r)
	switch {
	case f.SavingUs == 0 && f.GPUSavingUs > 0:
		return fmt.Sprintf("saves ~0 of the step while %s (%s of GPU time)", r.StepStats.LimitedBy(), analyze.FormatUs(f.GPUSavingUs))
	case f.NoTimeCost():
		return "no time saving: the cost is device memory"
	case f.SavingFrom == analyze.FromOneOff:
		return fmt.Sprintf("one-time cost ~%s (paid once per process: no steady-state step gets shorter)", analyze.FormatUs(f.OneOffUs))
	}
	gpu := ""
	if f.GPUSavingUs > 0 && analyze.FormatUs(f.GPUSavingUs) != analyze.FormatUs(f.SavingUs) {
		gpu = "; " + analyze.FormatUs(f.GPUSavingUs) + " of GPU time"
	}
	return fmt.Sprintf("saves ~%s %s (%s of the step%s)", analyze.FormatUs(f.SavingUs), per, analyze.FormatShare(f.Share), gpu)
}

// Per is Saving's unit for r's findings: "per step", or "over the run"
// when r's trace marks no steps (the whole trace is one).
func Per(r *analyze.Result) string {
	if r.Summary.StepsSynthetic {
		return "over the run"
	}
	return "per step"
}

// Title is f's title, safe for a terminal.
func Title(f *analyze.Finding) string { return termtext.Sanitize(f.Title) }

// Fix is f's fix, safe for a terminal.
func Fix(f *analyze.Finding) string { return termtext.Sanitize(f.Fix) }

package diff

import (
	"slices"

	"github.com/tracelens/tracelens/analyze"
)

// FindingChange is one finding (analyzer and subject) and what became of
// it.
type FindingChange struct {
	ID string
	// Subject is what the finding is about (analyze.Finding.Subject): the
	// same analyzer's findings about different subjects (two fusion
	// chains) are different findings.
	Subject string
	Title   string
	// Severity is the finding's severity in the run that has it (the new
	// run's when both do).
	Severity string
	// BaseSavingUs and NewSavingUs sum the estimated saving per step of the
	// findings with this analyzer and subject in each run.
	BaseSavingUs, NewSavingUs float64
	// BaseUntracedSavingUs sums the base findings' savings for the
	// program run without the profiler (analyze.Finding.UntracedSavingUs),
	// where their model gives one: what untraced timings of the fix are
	// compared with.
	BaseUntracedSavingUs float64
	// OneOff marks a one-time cost (analyze.FromOneOff: a cold start, a
	// compilation), which saves nothing per step: BaseOneOffUs and
	// NewOneOffUs sum its cost in each run instead.
	OneOff                    bool
	BaseOneOffUs, NewOneOffUs float64
	// LedgerLines are the step-ledger lines the base run's finding said
	// its saving comes out of (analyze.Finding.LedgerLines).
	LedgerLines []string
	// DeliveredUs is the measured change of those lines in the steady
	// step, base minus new (positive: they shrank), and DeliveredRatio it
	// over BaseSavingUs, the predicted saving (0 when nothing was
	// predicted); Measured is false when a side has no ledger.
	DeliveredUs    float64
	DeliveredRatio float64
	Measured       bool
	// Reduced marks a persisting finding that the fix cut to half or less
	// of what it was worth per step (of its cost, for a one-time cost):
	// still reported, but no longer the same problem.
	Reduced bool
	// SubjectGone marks a resolved finding whose subject is an op that
	// ran in BASE's steps and in none of NEW's (host-sync's aten::item
	// after a .item() was removed): what it measured is gone, whatever
	// the traced ledger lines show (a profiled host that runs ahead can
	// grow them: sync_accum's fix cut the untraced step 12 % and grew the
	// traced one 20 %).
	SubjectGone bool
}

// Findings sorts finding ids into resolved (only in base), new (only in
// new) and persisting (in both). Unreported holds the findings only in base
// whose ledger lines did not give back what they predicted (judgeResolved):
// the time the finding measured is still there; its estimate (often built
// on host times the profiler inflates) merely fell under its reporting
// threshold.
type Findings struct {
	Resolved, New, Persisting, Unreported []FindingChange
}

// compareFindings matches findings on analyzer and subject: an analyzer
// may report several (one per fusion chain, say), and a chain fixed while
// another appears is one resolved and one new finding. What matters across
// runs is whether the
// problem is still there.
func compareFindings(base, new []analyze.Finding) Findings {
	type agg struct {
		change   FindingChange
		inB, inN bool
	}
	type key struct{ id, subject string }
	byKey := map[key]*agg{}
	var order []key
	add := func(f analyze.Finding, isNew bool) {
		k := key{f.ID, f.Subject}
		a := byKey[k]
		if a == nil {
			a = &agg{change: FindingChange{ID: f.ID, Subject: f.Subject, Title: f.Title, Severity: f.Severity}}
			byKey[k] = a
			order = append(order, k)
		}
		if f.SavingFrom == analyze.FromOneOff {
			a.change.OneOff = true
		}
		if !isNew {
			for _, l := range f.LedgerLines {
				if !slices.Contains(a.change.LedgerLines, l) {
					a.change.LedgerLines = append(a.change.LedgerLines, l)
				}
			}
		}
		if isNew {
			if !a.inN {
				a.change.Title, a.change.Severity = f.Title, f.Severity
			}
			a.inN = true
			a.change.NewSavingUs += f.SavingUs
			a.change.NewOneOffUs += f.OneOffUs
		} else {
			a.inB = true
			a.change.BaseSavingUs += f.SavingUs
			a.change.BaseUntracedSavingUs += f.UntracedSavingUs
			a.change.BaseOneOffUs += f.OneOffUs
		}
	}
	for _, f := range base {
		add(f, false)
	}
	for _, f := range new {
		add(f, true)
	}
	var out Findings
	for _, k := range order {
		a := byKey[k]
		switch {
		case a.inB && a.inN:
			c := a.change
			if c.OneOff {
				c.Reduced = c.NewOneOffUs <= c.BaseOneOffUs/2
			} else {
				c.Reduced = c.BaseSavingUs > 0 && c.NewSavingUs <= c.BaseSavingUs/2
			}
			out.Persisting = append(out.Persisting, c)
		case a.inB:
			out.Resolved = append(out.Resolved, a.change)
		default:
			out.New = append(out.New, a.change)
		}
	}
	return out
}

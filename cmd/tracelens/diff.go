package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tracelens/tracelens/diff"
	"github.com/tracelens/tracelens/distributed"
)

const diffArgs = "[--format text|md|json] [--fail-on-regression PCT [--gate LIST]] [--alpha A] [--keep-warmup] BASE NEW"

func diffCommand() command {
	return command{name: "diff", args: diffArgs, summary: "compare two runs step by step with significance tests (benchstat style); a CI regression gate", run: runDiff,
		examples: []string{
			"tracelens diff base.json new.json",
			"tracelens diff --format md base.json new.json > pr-comment.md",
			"tracelens diff --fail-on-regression 5% base.json new.json   # CI gate: exit 1 on a regression",
		}}
}

// percentFlag is a threshold given as "5" or "5%"; set tells whether the
// user gave one (the gate is off otherwise).
type percentFlag struct {
	set bool
	pct float64
}

func (p *percentFlag) String() string {
	if !p.set {
		return ""
	}
	return strconv.FormatFloat(p.pct, 'g', -1, 64) + "%"
}

func (p *percentFlag) Set(s string) error {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || v < 0 || v != v {
		return fmt.Errorf("want a percentage like 5 or 5%%, got %q", s)
	}
	p.set, p.pct = true, v
	return nil
}

func runDiff(e *env, args []string) error {
	fs := newFlags("diff")
	format := fs.String("format", "text", "output `FORMAT`: text (terminal), md (pull-request comment) or json")
	var gate percentFlag
	fs.Var(&gate, "fail-on-regression", "exit 1 when step wall or GPU busy time got significantly worse by more than `PCT` percent (5 or 5%)")
	gateList := fs.String("gate", "", "with --fail-on-regression, what to gate: a comma-separated `LIST` of step, gpu_busy, ledger:LINE, category:NAME, kernel:NAME (default step,gpu_busy)")
	alpha := fs.Float64("alpha", diff.DefaultAlpha, "significance level `A` of the Mann–Whitney U test")
	keepWarmup := fs.Bool("keep-warmup", false, "compare the first step too (dropped by default: it carries one-time costs)")
	pos, err := parseFlags(e, fs, diffArgs, args)
	if err != nil {
		return err
	}
	rf := &e.run
	if len(pos) != 2 {
		return usageError{fmt.Sprintf("expected BASE and NEW traces, got %d arguments", len(pos))}
	}
	if err := stdinOnce(pos); err != nil {
		return err
	}
	write, ok := map[string]func(io.Writer, *diff.Result) error{
		"text": func(w io.Writer, r *diff.Result) error {
			return diff.WriteTextWidth(w, r, e.nameWidth(diff.TextNameWidth))
		},
		"md":   diff.WriteMarkdown,
		"json": diff.WriteJSON,
	}[*format]
	if !ok {
		return usageError{fmt.Sprintf("unknown --format %q (want text, md or json)", *format)}
	}
	if !(*alpha > 0 && *alpha < 1) {
		return usageError{fmt.Sprintf("--alpha must be between 0 and 1, got %g", *alpha)}
	}
	if distributed.IsRun(pos[:1]) || distributed.IsRun(pos[1:]) {
		return runDiffRun(e, pos, rf, *format, write, diff.Options{Alpha: *alpha, KeepWarmup: *keepWarmup}, gate)
	}
	sides, err := loadAnalyzedPair(e, pos)
	if err != nil {
		return err
	}
	r, err := diff.Compare(sides[0], sides[1], diff.Options{Alpha: *alpha, KeepWarmup: *keepWarmup})
	if err != nil {
		return err
	}
	if err := write(e.stdout, r); err != nil {
		return err
	}
	if !gate.set {
		return nil
	}
	// Failures judged on medians alone (too few steps for the U test) say
	// so in their own text.
	failures, _ := r.Gate(gate.pct)
	if *gateList != "" {
		targets, err := diff.ParseGate(*gateList)
		if err != nil {
			return usageError{"--gate: " + err.Error()}
		}
		failures, _ = r.GateOn(targets, gate.pct)
	}
	if len(failures) > 0 {
		return exitError{code: exitGate, err: errors.New("regression gate tripped: " + strings.Join(failures, "; "))}
	}
	fmt.Fprintf(e.stderr, "tracelens diff: gate passed: no significant regression of step wall or GPU busy time above %s\n", gate.String())
	return nil
}

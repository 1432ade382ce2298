package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/tracelens/tracelens/diff"
	"github.com/tracelens/tracelens/distributed"
	"github.com/tracelens/tracelens/trace"
)

// runSide is one side of `diff RUN_A RUN_B`: the run and the full trace of
// the rank whose step-by-step diff is shown.
type runSide struct {
	run   *distributed.Run
	trace *trace.Trace
}

func loadRunSide(e *env, arg string, rf *runFlags) (*runSide, error) {
	if !distributed.IsRun([]string{arg}) {
		return nil, fmt.Errorf("%s: diff compares two runs or two traces, not a run with a trace", arg)
	}
	run, _, err := loadRun(e, []string{arg}, rf)
	if err != nil {
		return nil, err
	}
	t, err := loadTrace(e, reportRank(run).Source)
	if err != nil {
		return nil, err
	}
	return &runSide{run: run, trace: t}, nil
}

// runDiffRow is one per-step metric of one rank (or "all": every rank's
// steps pooled) compared between the runs.
type runDiffRow struct {
	Metric      string  `json:"metric"`
	Rank        string  `json:"rank"`
	BaseUs      float64 `json:"base_median_us"`
	NewUs       float64 `json:"new_median_us"`
	Pct         float64 `json:"delta_pct"`
	P           float64 `json:"p"`
	Significant bool    `json:"significant"`
	Note        string  `json:"note,omitempty"`
}

// rankMetrics are the per-step figures compared per rank.
var rankMetrics = []struct {
	name string
	get  func(distributed.StepComm) trace.Duration
}{
	{"step_wall_us", func(s distributed.StepComm) trace.Duration { return s.Wall }},
	{"comm_kernel_us", func(s distributed.StepComm) trace.Duration { return s.CommKernel }},
	{"exposed_comm_us", func(s distributed.StepComm) trace.Duration { return s.Exposed }},
	{"wait_us", func(s distributed.StepComm) trace.Duration { return s.Wait }},
}

// compareRuns compares every rank present in both runs, per step, with the
// same test as `diff` (Mann–Whitney U, first step dropped unless kept).
func compareRuns(a, b *distributed.Run, opt diff.Options) []runDiffRow {
	alpha := opt.Alpha
	if alpha == 0 {
		alpha = diff.DefaultAlpha
	}
	var rows []runDiffRow
	pooled := make([][2][]float64, len(rankMetrics))
	for ia, ra := range a.Ranks {
		ib := b.RankIndex(ra.Rank)
		if ib < 0 {
			continue
		}
		sa, sb := a.PerStep(ia), b.PerStep(ib)
		if !opt.KeepWarmup {
			sa, sb = sa[min(1, len(sa)):], sb[min(1, len(sb)):]
		}
		for m, metric := range rankMetrics {
			x, y := samples(sa, metric.get), samples(sb, metric.get)
			pooled[m][0] = append(pooled[m][0], x...)
			pooled[m][1] = append(pooled[m][1], y...)
			rows = append(rows, diffRow(metric.name, fmt.Sprint(ra.Rank), diff.CompareSamples(x, y, alpha)))
		}
	}
	for m, metric := range rankMetrics {
		rows = append(rows, diffRow(metric.name, "all", diff.CompareSamples(pooled[m][0], pooled[m][1], alpha)))
	}
	return rows
}

func samples(steps []distributed.StepComm, get func(distributed.StepComm) trace.Duration) []float64 {
	out := make([]float64, len(steps))
	for i, s := range steps {
		out[i] = get(s).Micros()
	}
	return out
}

func diffRow(metric, rank string, d diff.Delta) runDiffRow {
	r := runDiffRow{Metric: metric, Rank: rank, BaseUs: d.Base.Median, NewUs: d.New.Median, Pct: d.Pct, P: d.P, Significant: d.Significant, Note: d.Note}
	if math.IsNaN(r.Pct) {
		r.Pct = 0 // from zero: JSON has no NaN; the medians say it
	}
	return r
}

// runDiff compares two runs: the step-by-step diff of their lowest ranks,
// then per-rank communication per step. The gate applies to the rank diff.
func runDiffRun(e *env, pos []string, rf *runFlags, format string, write func(io.Writer, *diff.Result) error, opt diff.Options, gate percentFlag) error {
	a, err := loadRunSide(e, pos[0], rf)
	if err != nil {
		return err
	}
	b, err := loadRunSide(e, pos[1], rf)
	if err != nil {
		return err
	}
	r, err := diff.CompareTraces(a.trace, b.trace, opt)
	if err != nil {
		return err
	}
	rows := compareRuns(a.run, b.run, opt)
	ra, rb := reportRank(a.run).Rank, reportRank(b.run).Rank
	if format == "json" {
		var buf bytes.Buffer
		if err := write(&buf, r); err != nil {
			return err
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetEscapeHTML(false) // kernel names keep their < > &
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			BaseRank int             `json:"base_rank"`
			NewRank  int             `json:"new_rank"`
			Rank     json.RawMessage `json:"rank_diff"`
			Ranks    []runDiffRow    `json:"ranks"`
		}{ra, rb, json.RawMessage(buf.Bytes()), rows})
	}
	fmt.Fprintf(e.stdout, "Runs: %s vs %s; step by step on rank %d vs rank %d:\n\n", a.run.Describe(), b.run.Describe(), ra, rb)
	if err := write(e.stdout, r); err != nil {
		return err
	}
	writeRunDiff(e.stdout, format == "md", rows)
	if !gate.set {
		return nil
	}
	failures, untested := r.Gate(gate.pct)
	for _, u := range untested {
		fmt.Fprintf(e.stderr, "tracelens diff: warning: %s\n", u)
	}
	if len(failures) == 0 {
		fmt.Fprintf(e.stderr, "tracelens diff: gate passed on rank %d: no significant regression above %s\n", ra, gate.String())
		return nil
	}
	return exitError{code: exitGate, err: errors.New("regression gate tripped: " + strings.Join(failures, "; "))}
}

func writeRunDiff(w io.Writer, md bool, rows []runDiffRow) {
	sep := "  "
	if md {
		fmt.Fprintf(w, "\n### Communication per step, per rank\n\n| metric | rank | base | new | delta | p |\n|---|---:|---:|---:|---:|---:|\n")
		sep = " | "
	} else {
		fmt.Fprintf(w, "\nCommunication per step, per rank (medians; Mann–Whitney U):\n%-16s %5s %10s %10s %8s %6s\n", "METRIC", "RANK", "BASE", "NEW", "DELTA", "P")
	}
	for _, r := range rows {
		delta := diff.FormatPct(r.Pct)
		if r.Significant {
			delta += " *"
		}
		cells := []string{r.Metric, r.Rank, diff.FormatTime(r.BaseUs), diff.FormatTime(r.NewUs), delta, diff.FormatP(r.P)}
		if md {
			fmt.Fprintf(w, "| %s |\n", strings.Join(cells, sep))
			continue
		}
		fmt.Fprintf(w, "%-16s %5s %10s %10s %8s %6s\n", cells[0], cells[1], cells[2], cells[3], cells[4], cells[5])
	}
	fmt.Fprintln(w, "\n* significant at the diff's α; the first step is dropped unless --keep-warmup.")
}

package main

// Multi-rank runs: `tracelens info|top|findings|report DIR|FILES|GLOB` and
// `diff RUN_A RUN_B`. A run is read by package distributed; the single
// trace commands hand over to the functions here when their arguments name
// a run (distributed.IsRun), so a single file works exactly as before.

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/distributed"
	"github.com/tracelens/tracelens/jsonout"
	"github.com/tracelens/tracelens/report"
	"github.com/tracelens/tracelens/termtext"
	"github.com/tracelens/tracelens/trace"
)

// runFlags are the run options of declareTraceFlags: --comm-kernel, and
// --enable/--disable as given (enableArg, disableArg) and as the
// cross-rank checks they select (enable, disable; selectAnalyzers).
type runFlags struct {
	commKernel            string
	enableArg, disableArg string
	enable, disable       []string
}

// options are the run analysis's options the flags set: the
// communication kernel pattern and the cross-rank checks selected.
func (rf *runFlags) options() (distributed.Options, error) {
	opt := distributed.Options{Enable: rf.enable, Disable: rf.disable}
	if rf.commKernel != "" {
		re, err := regexp.Compile(rf.commKernel)
		if err != nil {
			return opt, usageError{fmt.Sprintf("bad --comm-kernel: %v", err)}
		}
		opt.CommKernel = re
	}
	return opt, nil
}

// loadRun reads every rank of a run and analyzes the run, with the same
// memory rule as one big trace (a soft limit per rank in flight).
func loadRun(e *env, args []string, rf *runFlags) (*distributed.Run, *distributed.Result, error) {
	files, err := distributed.Files(args)
	if err != nil {
		return nil, nil, err
	}
	opt, err := rf.options()
	if err != nil {
		return nil, nil, err
	}
	if e.stderrTTY {
		fmt.Fprintf(e.stderr, "reading %d rank traces...\n", len(files))
	}
	// --max-memory caps each rank's model as it caps one trace's.
	opt.MaxMemory = e.maxMemory
	opt.MemoryBudget = distributed.Budget(files, 2)
	if opt.MemoryBudget < bigTrace {
		opt.MemoryBudget = 0 // small runs: the default collector is fine
	}
	if b := e.memBudget(); b != nil {
		opt.MemoryBudget = min(opt.MemoryBudget, b.Limit()*9/10) // under the process's budget
		b.Enter(strings.Join(args, " "), "reading the run's ranks")
	}
	run, err := distributed.Load(files, opt)
	if err != nil {
		return nil, nil, err
	}
	read := func(path string) (*trace.Trace, error) { return distributed.ReadRankTraceWith(path, e.maxMemory) }
	return run, distributed.Analyze(run, read, opt), nil
}

func runInfoRun(e *env, args []string, rf *runFlags) error {
	run, res, err := loadRun(e, args, rf)
	if err != nil {
		return err
	}
	w := e.stdout
	fmt.Fprintf(w, "run        %s\n", run.Describe())
	for _, r := range run.Ranks {
		fmt.Fprintf(w, "rank %-5d %s (rank from %s): %s, %s, %d events, %d steps, %d communication kernels, span %s\n",
			r.Rank, r.Source, r.RankFrom, cmpOr(r.Format, "?"), cmpOr(r.Device, "unknown device"), r.Events, len(r.Steps), len(r.Collectives), r.Span.Dur())
	}
	for _, g := range run.Ranks[0].Groups {
		fmt.Fprintf(w, "group      %s (%s): %d ranks %v\n", g.Name, g.Desc, g.Size, g.Ranks)
	}
	for _, c := range run.Clocks[1:] {
		fmt.Fprintf(w, "clock      rank %d: %s ± %s from rank %d over %d collectives\n", c.Rank, c.Offset, c.Residual, run.Ranks[0].Rank, c.Samples)
	}
	if run.ClockCorrected {
		fmt.Fprintln(w, "           offsets removed before computing skew and wait")
	}
	writeRunNotes(w, res)
	return nil
}

func cmpOr(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// writeRunNotes prints what could not be matched and what looked odd.
func writeRunNotes(w io.Writer, res *distributed.Result) {
	if len(res.Missing) > 0 {
		fmt.Fprintf(w, "missing    ranks %v of world size %d have no trace\n", res.Missing, res.WorldSize)
	}
	for _, u := range res.Unmatched {
		fmt.Fprintf(w, "unmatched  rank %d, group %s: %d communication kernels (%s)\n", u.Rank, u.Group, u.Count, u.Reason)
	}
	for _, s := range res.Warnings {
		fmt.Fprintf(w, "warning    %s\n", s)
	}
}

func runTopRun(e *env, args []string, rf *runFlags, opt topOptions) error {
	run, _, err := loadRun(e, args, rf)
	if err != nil {
		return err
	}
	rows, all := run.Kernels()
	launches := 0
	for _, r := range rows {
		launches += r.Count
	}
	matched := keep(opt, rows, func(k distributed.RunKernel) string { return k.Name })
	shown := matched
	if opt.n > 0 && len(shown) > opt.n {
		shown = shown[:opt.n]
	}
	switch opt.format {
	case "csv":
		return writeTopRunCSV(e.stdout, shown, run.CommKernel)
	case "json":
		type row struct {
			analyze.KernelTiming
			Ranks         int     `json:"ranks"`
			RankMinUs     float64 `json:"rank_min_us"`
			RankMinAt     int     `json:"rank_min_at"`
			RankMaxUs     float64 `json:"rank_max_us"`
			RankMaxAt     int     `json:"rank_max_at"`
			Communication bool    `json:"communication"`
		}
		out := struct {
			Summary topSummary `json:"summary"`
			Ranks   int        `json:"ranks"`
			Kernels []row      `json:"kernels"`
		}{Summary: topSummary{KernelLaunches: launches, DistinctKernels: len(rows), GPUKernelUs: all.Micros(), Device: run.Ranks[0].Device}, Ranks: len(run.Ranks)}
		for _, r := range run.Ranks {
			out.Summary.Events += r.Events
		}
		out.Kernels = []row{}
		for _, k := range shown {
			out.Kernels = append(out.Kernels, row{KernelTiming: analyze.KernelTiming{Name: k.Name, Count: k.Count, TotalUs: k.Total.Micros(), MeanUs: k.Mean.Micros(),
				MinUs: k.Min.Micros(), MaxUs: k.Max.Micros(), Share: k.Share}, Ranks: k.Ranks, RankMinUs: k.RankMin.Micros(), RankMinAt: k.RankMinAt,
				RankMaxUs: k.RankMax.Micros(), RankMaxAt: k.RankMaxAt, Communication: distributed.IsCommKernel(k.Name, run.CommKernel)})
		}
		return jsonout.Write(e.stdout, out)
	}
	w := e.stdout
	fmt.Fprintf(w, "%s\n%d kernel launches on %d ranks, %d distinct kernels, %s of GPU kernel time\n", run.Describe(), launches, len(run.Ranks), len(rows), all)
	if opt.filter != nil {
		fmt.Fprintf(w, "--filter %s: %d of %d kernels match\n", termtext.Sanitize(opt.filter.String()), len(matched), len(rows))
	}
	fmt.Fprintln(w)
	names := make([]string, len(shown))
	for i, k := range shown {
		names[i] = k.Name
	}
	nameW := topNameWidth - 6
	names = termtext.DistinctNames(shortNames(names, e.wide), names, e.nameWidth(nameW))
	for _, n := range names {
		nameW = max(nameW, utf8.RuneCountInString(n))
	}
	fmt.Fprintf(w, "%-*s %7s %7s %7s %7s %7s %15s %15s %5s\n", nameW, "KERNEL", "COUNT", "TOTAL", "MEAN", "MIN", "MAX", "RANK MIN", "RANK MAX", "SHARE")
	for i, k := range shown {
		at := func(d trace.Duration, r int) string {
			if r < 0 {
				return "0 (some)"
			}
			return fmt.Sprintf("%s @%d", d, r)
		}
		fmt.Fprintf(w, "%-*s %7d %7s %7s %7s %7s %15s %15s %4.1f%%\n", nameW, names[i],
			k.Count, k.Total, k.Mean, k.Min, k.Max, at(k.RankMin, k.RankMinAt), at(k.RankMax, k.RankMaxAt), 100*k.Share)
	}
	if len(shown) < len(matched) {
		fmt.Fprintf(w, "... %d more kernels (use -n 0 for all)\n", len(matched)-len(shown))
	}
	fmt.Fprintln(w, "\nRANK MIN/MAX: the smallest and largest total of the kernel on one rank, and which rank.")
	return nil
}

// runFindingsRun lists the run's findings: the cross-rank ones ranked with
// the described rank's own, printed as a lone trace's are (sanitized, with
// the combined saving), each with the ranks it concerns.
func runFindingsRun(e *env, args []string, rf *runFlags, format string, cfg analyze.Config) error {
	ra, err := loadRunAnalysis(e, args, rf, cfg)
	if err != nil {
		return err
	}
	if format == "json" {
		return jsonout.Write(e.stdout, ra.res)
	}
	w := e.stdout
	fmt.Fprintf(w, "run %s: %s\n", termtext.Sanitize(ra.name), termtext.Sanitize(ra.run.Describe()))
	fmt.Fprintf(w, "findings of the run and of rank %d, ranked together (the other ranks: tracelens findings FILE)\n", ra.rank.Rank)
	fmt.Fprintln(w, ranksBusy(ra.res.Ranks))
	writeFindings(w, ra.r, e.nameWidth(evidenceCellWidth))
	fmt.Fprintln(w)
	writeRunNotes(w, ra.res)
	return nil
}

// ranksBusy is the run's per-rank GPU busy line, as the report's and the
// TUI's Ranks tables give it: each rank's own GPU work, its spinning
// communication kernels counted as waiting (the first 8 ranks).
func ranksBusy(rows []distributed.RankRow) string {
	var parts []string
	for _, r := range rows[:min(len(rows), 8)] {
		p := fmt.Sprintf("rank %d %s", r.Rank, report.RankBusy(r))
		if r.GPUSpinShare >= 0.0005 {
			p += fmt.Sprintf(" +%.1f%% spinning", 100*r.GPUSpinShare)
		}
		parts = append(parts, p)
	}
	if len(rows) > 8 {
		parts = append(parts, fmt.Sprintf("… (%d ranks)", len(rows)))
	}
	return "GPU busy per rank over its trace (spinning in communication kernels counts as waiting): " + strings.Join(parts, "; ")
}

func rankList(r []int) string {
	if len(r) > 8 {
		return fmt.Sprintf("%v … (%d ranks)", r[:8], len(r))
	}
	return fmt.Sprint(r)
}

// reportRank picks the rank the single-trace sections of a run's report
// describe: the lowest rank, so that reports of runs compare.
func reportRank(run *distributed.Run) *distributed.Rank { return run.Ranks[0] }

// loadRunInput reads a run for `report`: the run's analysis and the full
// trace and analysis of the rank the single-trace sections describe.
func loadRunInput(e *env, args []string, rf *runFlags, cfg analyze.Config) (report.Input, error) {
	ra, err := loadRunAnalysis(e, args, rf, cfg)
	if err != nil {
		return report.Input{}, err
	}
	return report.Input{Trace: ra.t, Result: ra.r, Run: ra.res, Rank: ra.rank.Rank, RunName: ra.name}, nil
}

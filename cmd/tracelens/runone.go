package main

// A run directory is one analysis: the run's cross-rank findings ranked
// with the described rank's own (distributed.Combine), so every face of
// the run leads with the same finding.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/distributed"
	"github.com/tracelens/tracelens/trace"
)

// runAnalysis is a run read as one analysis: the run, its analysis with
// the ranked findings, and the described rank's trace and analysis (its
// ledger telling its waiting for peers apart).
type runAnalysis struct {
	name string
	run  *distributed.Run
	res  *distributed.Result
	rank *distributed.Rank
	t    *trace.Trace
	r    *analyze.Result
}

// loadRunAnalysis reads a run and makes it one analysis: the described
// rank (reportRank) is analyzed with its peer-wait intervals and the run's
// findings are ranked with its own.
func loadRunAnalysis(e *env, args []string, rf *runFlags, cfg analyze.Config) (*runAnalysis, error) {
	run, res, err := loadRun(e, args, rf)
	if err != nil {
		return nil, err
	}
	rk := reportRank(run)
	t, err := loadTrace(e, rk.Source)
	if err != nil {
		return nil, err
	}
	cfg.PeerWait = run.PeerWaits(run.RankIndex(rk.Rank))
	r, err := e.analyzeWithin(rk.Source, t, cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rk.Source, err)
	}
	distributed.Combine(res, r, rk.Rank)
	return &runAnalysis{name: runName(args, run), run: run, res: res, rank: rk, t: t, r: r}, nil
}

// runName names a run after its directory: the argument when it is one,
// else the directory of its first rank's file.
func runName(args []string, run *distributed.Run) string {
	if len(args) == 1 {
		if st, err := os.Stat(args[0]); err == nil && st.IsDir() {
			return filepath.Base(filepath.Clean(args[0]))
		}
	}
	return filepath.Base(filepath.Dir(run.Ranks[0].Source))
}

// selectAnalyzers splits --enable/--disable into the single-trace
// analyzers' Config and the cross-rank checks (kept in rf for loadRun),
// checking every name against both. Enabling only checks runs no
// single-trace analyzer, and enabling only analyzers runs no check, as
// --enable means "only these".
func (rf *runFlags) selectAnalyzers(enable, disable []string) (analyze.Config, error) {
	var cfg analyze.Config
	rf.enable, rf.disable = nil, nil
	split := func(names []string, checks, analyzers *[]string) {
		for _, n := range names {
			if distributed.IsCheck(n) {
				*checks = append(*checks, n)
			} else {
				*analyzers = append(*analyzers, n)
			}
		}
	}
	split(enable, &rf.enable, &cfg.Enable)
	split(disable, &rf.disable, &cfg.Disable)
	if _, err := analyze.Select(cfg.Enable, cfg.Disable); err != nil {
		known := analyze.Names()
		for _, c := range distributed.Checks() {
			known = append(known, c.Name)
		}
		for _, n := range slices.Concat(cfg.Enable, cfg.Disable) {
			if analyze.Lookup(n) == nil {
				return cfg, usageError{fmt.Sprintf("unknown analyzer %q (known: %s)", n, strings.Join(known, ", "))}
			}
		}
		return cfg, usageError{err.Error()}
	}
	if len(enable) > 0 && len(cfg.Enable) == 0 {
		cfg.Disable = analyze.Names()
	}
	if len(enable) > 0 && len(rf.enable) == 0 {
		for _, c := range distributed.Checks() {
			rf.disable = append(rf.disable, c.Name)
		}
	}
	return cfg, nil
}

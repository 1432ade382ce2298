package main

// A run directory is one analysis: the run's cross-rank findings ranked
// with the described rank's own (distributed.Combine), so every face of
// the run leads with the same finding.

import (
	"fmt"
	"os"
	"path/filepath"

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
	r, err := analyze.Run(t, cfg)
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

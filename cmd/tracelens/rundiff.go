package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tracelens/tracelens/diff"
	"github.com/tracelens/tracelens/distributed"
	"github.com/tracelens/tracelens/jsonout"
)

// loadRunSide reads one side of `diff RUN_A RUN_B` as one analysis
// (loadRunAnalysis): the run, its cross-rank findings ranked with the
// described rank's own, and that rank's analysis with its peer wait.
func loadRunSide(e *env, arg string, rf *runFlags) (*runAnalysis, error) {
	if !distributed.IsRun([]string{arg}) {
		return nil, fmt.Errorf("%s: diff compares two runs or two traces, not a run with a trace", arg)
	}
	return loadRunAnalysis(e, []string{arg}, rf, e.cfg)
}

// runDiffRun compares two runs: the step-by-step diff of the described
// ranks (their spinning NCCL kernels counted as peer wait, not GPU busy;
// the run's cross-rank findings among theirs), then the cross-rank
// findings and every rank's figures per step (distributed.CompareRuns).
// The gate trips on the rank diff's gate, a new straggler, or exposed
// communication growing.
func runDiffRun(e *env, pos []string, rf *runFlags, format string, write func(io.Writer, *diff.Result) error, opt diff.Options, gate percentFlag) error {
	a, err := loadRunSide(e, pos[0], rf)
	if err != nil {
		return err
	}
	b, err := loadRunSide(e, pos[1], rf)
	if err != nil {
		return err
	}
	r, err := diff.Compare(a.r, b.r, opt)
	if err != nil {
		return err
	}
	distributed.AddPeerWait(r, a.r, b.r, opt.KeepWarmup)
	d := distributed.CompareRuns(a.run, b.run, a.res, b.res, opt)
	if format == "json" {
		var buf bytes.Buffer
		if err := write(&buf, r); err != nil {
			return err
		}
		if err := jsonout.Write(e.stdout, struct {
			BaseRank int                  `json:"base_rank"`
			NewRank  int                  `json:"new_rank"`
			Rank     json.RawMessage      `json:"rank_diff"`
			Run      *distributed.RunDiff `json:"run_diff"`
		}{a.rank.Rank, b.rank.Rank, json.RawMessage(buf.Bytes()), d}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(e.stdout, "Runs %s (%s) vs %s (%s); step by step on rank %d vs rank %d, a waiting rank's spinning NCCL kernels counted as peer wait, not GPU busy:\n\n",
			a.name, a.run.Describe(), b.name, b.run.Describe(), a.rank.Rank, b.rank.Rank)
		if err := write(e.stdout, r); err != nil {
			return err
		}
		if err := distributed.WriteRunDiff(e.stdout, d, format == "md"); err != nil {
			return err
		}
	}
	if !gate.set {
		return nil
	}
	failures, untested := r.Gate(gate.pct)
	rf2, ru := d.Gate(gate.pct)
	failures, untested = append(failures, rf2...), append(untested, ru...)
	for _, u := range untested {
		fmt.Fprintf(e.stderr, "tracelens diff: warning: %s\n", u)
	}
	if len(failures) == 0 {
		fmt.Fprintf(e.stderr, "tracelens diff: gate passed: no new straggler, no growth of exposed communication, no significant regression above %s on rank %d\n", gate.String(), a.rank.Rank)
		return nil
	}
	return exitError{code: exitGate, err: errors.New("regression gate tripped: " + strings.Join(failures, "; "))}
}

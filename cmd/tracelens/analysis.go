package main

import (
	"io"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/trace"
)

// analyzeTrace is the one analysis every command runs over a trace it has
// read (findings, report, a run's described rank, demo, and the TUI for
// each trace it shows): analyze.Run with the command's configuration.
// The faces render its Result and View; none analyzes on its own.
func analyzeTrace(t *trace.Trace, cfg analyze.Config) (*analyze.Result, error) {
	return analyze.Run(t, cfg)
}

// analyze is analyzeTrace with the command's analyzer selection
// (--enable/--disable, e.cfg) over cfg's per-trace settings (a rank's peer
// waits): how the faces that analyze later, the TUI's screens, honour the
// flags.
func (e *env) analyze(t *trace.Trace, cfg analyze.Config) (*analyze.Result, error) {
	cfg.Enable, cfg.Disable, cfg.Stages = e.cfg.Enable, e.cfg.Disable, e.stages
	defer e.stageAt("analysis returned")
	return analyzeTrace(t, cfg)
}

// quietEnv is e for work beside a full-screen UI or a protocol on stdout
// (the TUI's background loads, the MCP server): the same options, and no
// progress or messages on standard error.
func quietEnv(e *env) *env {
	q := *e
	q.stderr, q.stderrTTY = io.Discard, false
	return &q
}

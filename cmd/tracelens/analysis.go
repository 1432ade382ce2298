package main

import (
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

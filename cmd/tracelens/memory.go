package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/membudget"
	"github.com/tracelens/tracelens/termtext"
	"github.com/tracelens/tracelens/trace"
)

// memState is the process's memory budget (--max-memory, issue 27): made
// by main with the default (half of the machine's or the container's
// memory), its limit taken from --max-memory when a command parses it
// (setMaxMemory). Envs made elsewhere (in-process tests, the TUI's loaders) have
// none: their checks do nothing, and only main's watchdog, which sees the
// whole process, stops it.
type memState struct {
	budget *membudget.Budget
	// beforeExit are what must run before the watchdog ends the process
	// (the TUI restoring the terminal), each bounded in time by its own.
	mu         sync.Mutex
	beforeExit map[int]func()
	next       int
}

// atStop registers f to run before the watchdog ends the process; the
// returned function unregisters it. Without a budget it does nothing.
func (e *env) atStop(f func()) (remove func()) {
	m := e.mem
	if m == nil {
		return func() {}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.beforeExit == nil {
		m.beforeExit = map[int]func(){}
	}
	id := m.next
	m.next++
	m.beforeExit[id] = f
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.beforeExit, id)
	}
}

// runBeforeExit runs the registered functions, once.
func (m *memState) runBeforeExit() {
	m.mu.Lock()
	fs := m.beforeExit
	m.beforeExit = nil
	m.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// startMemoryBudget makes main's budget, sets the Go runtime's soft
// memory limit under it (process-wide, so here only) and starts the
// watchdog that stops the process with exit 2 when the resident size
// passes the hard limit between two checks. It returns the function that
// stops the watchdog.
func startMemoryBudget(e *env, stderr io.Writer) func() {
	b := membudget.New(ingest.DefaultMaxMemory())
	m := &memState{budget: b}
	e.mem = m
	b.SoftLimit()
	ctx, cancel := context.WithCancel(context.Background())
	go b.Watch(ctx, func(err *membudget.Error) {
		m.runBeforeExit()
		fmt.Fprintf(stderr, "\ntracelens: %s\n", termtext.Sanitize(err.Error()))
		os.Exit(exitUsageOrBad)
	})
	return cancel
}

// setMaxMemory takes --max-memory (n bytes; 0 when unparsable, which
// leaves the default): the model's cap in ingest and, in main, the
// process's budget that every command, the TUI and export included,
// is held to from here on.
func (e *env) setMaxMemory(n int64) {
	e.maxMemory = n
	if e.mem != nil && n > 0 {
		e.mem.budget.SetLimit(n)
		e.mem.budget.SoftLimit()
	}
}

// memBudget is the process's budget (nil where the env has none).
func (e *env) memBudget() *membudget.Budget {
	if e.mem == nil {
		return nil
	}
	return e.mem.budget
}

// analyzeWithin is analyzeTrace under the process's memory budget: the
// analysis checks it between facts and analyzers and stops with an error
// naming the stage, "analysis" (the callers prefix the file, so the
// error leaves it out; the watchdog's message names it); after it, the
// stage is the output.
func (e *env) analyzeWithin(file string, t *trace.Trace, cfg analyze.Config) (*analyze.Result, error) {
	cfg.Stages = e.stages
	b := e.memBudget()
	if b == nil {
		defer e.stageAt("analysis returned")
		return analyzeTrace(t, cfg)
	}
	b.Enter(file, "analysis")
	b.TightenForAnalysis()
	cfg.Budget = analysisCheck(b, true)
	r, err := analyzeTrace(t, cfg)
	e.stageAt("analysis returned")
	b.Enter(file, "writing the output")
	return r, err
}

// analysisCheck is the analysis's budget check (analyze.Config.Budget)
// under b, raising the collector's limit first where relax (the analysis
// holds the collector's settings; a side-by-side pair does not). Its
// error leaves the file out: the callers prefix it.
func analysisCheck(b *membudget.Budget, relax bool) func() error {
	return func() error {
		if relax {
			b.RelaxForAnalysis()
		}
		err := b.Check()
		if be, ok := err.(*membudget.Error); ok {
			be.File = ""
		}
		return err
	}
}

// readingProgress chains the budget's offset record before progress (nil
// when neither is wanted), so a budget error while reading names the
// byte reached.
func (e *env) readingProgress(file string, progress func(read, total int64)) func(read, total int64) {
	b := e.memBudget()
	if b == nil {
		return progress
	}
	b.Enter(file, "reading")
	if progress == nil {
		return b.Progress
	}
	return func(read, total int64) {
		b.Progress(read, total)
		progress(read, total)
	}
}

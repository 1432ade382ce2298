package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/tracelens/tracelens/distributed"
	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
	"github.com/tracelens/tracelens/tui"
	"golang.org/x/term"
)

const tuiArgs = "TRACE | BASE NEW | RUN (DIR, GLOB or rank files)"

func tuiCommand() command {
	return command{name: "tui", args: tuiArgs, summary: "explore a trace (the diff of two, the ranks of a run) in a terminal UI", run: runTUI}
}

func runTUI(e *env, args []string) error {
	fs := newFlags("tui")
	rf := addRunFlags(fs)
	pos, err := parseFlags(e, fs, tuiArgs, args)
	if err != nil {
		return err
	}
	// Two arguments are BASE NEW; a directory, a pattern or three or
	// more rank files are a run.
	isRun := len(pos) != 2 && len(pos) > 0 && distributed.IsRun(pos)
	if len(pos) == 0 || len(pos) > 2 && !isRun {
		return usageError{fmt.Sprintf("expected TRACE, BASE NEW or a run's DIR, GLOB or rank files, got %d arguments", len(pos))}
	}
	out, ok := stdoutFile(e)
	if !ok || !term.IsTerminal(int(out.Fd())) {
		return usageError{"the terminal UI needs a terminal on standard output (use top or info for text output)"}
	}
	opts := tui.Options{Name: pos[len(pos)-1], Load: tuiLoader(pos[len(pos)-1])}
	if isRun {
		opts.Name = strings.Join(pos, " ")
		opts.LoadRun = func(func(read, total int64)) (*distributed.Result, error) {
			_, res, err := loadRun(&env{stderr: io.Discard}, pos, rf)
			return res, err
		}
		opts.LoadRank = tuiLoader
	}
	if len(pos) == 2 {
		opts.BaseName, opts.LoadBase = pos[0], tuiLoader(pos[0])
	}
	// The terminal itself, not the error-recording writer around it:
	// the UI asks it for its size and colours.
	return tui.Run(opts, e.stdin, out)
}

// tuiLoader reads path in the background, feeding the UI's progress bar.
func tuiLoader(path string) tui.Loader {
	return func(progress func(read, total int64)) (*trace.Trace, error) {
		if strings.HasPrefix(path, embeddedPrefix) {
			return loadTrace(&env{stderr: io.Discard}, path)
		}
		return ingest.ReadFile(path, ingest.Options{Progress: progress})
	}
}

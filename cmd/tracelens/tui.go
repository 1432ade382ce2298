package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
	"github.com/tracelens/tracelens/tui"
	"golang.org/x/term"
)

const tuiArgs = "TRACE | BASE NEW"

func tuiCommand() command {
	return command{name: "tui", args: tuiArgs, summary: "explore a trace (or the diff of two) in a terminal UI", run: runTUI}
}

func runTUI(e *env, args []string) error {
	fs := newFlags("tui")
	pos, err := parseFlags(e, fs, tuiArgs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 || len(pos) > 2 {
		return usageError{fmt.Sprintf("expected TRACE or BASE NEW, got %d arguments", len(pos))}
	}
	out, ok := e.stdout.(*os.File)
	if !ok || !term.IsTerminal(int(out.Fd())) {
		return usageError{"the terminal UI needs a terminal on standard output (use top or info for text output)"}
	}
	opts := tui.Options{Name: pos[len(pos)-1], Load: tuiLoader(pos[len(pos)-1])}
	if len(pos) == 2 {
		opts.BaseName, opts.LoadBase = pos[0], tuiLoader(pos[0])
	}
	return tui.Run(opts, e.stdin, e.stdout)
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

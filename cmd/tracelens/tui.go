package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/distributed"
	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
	"github.com/tracelens/tracelens/tui"
	"golang.org/x/term"
)

const tuiArgs = "TRACE | BASE NEW | RUN (DIR, GLOB or rank files)"

func tuiCommand() command {
	return command{name: "tui", args: tuiArgs, summary: "explore a trace (the diff of two, the ranks of a run) in a terminal UI", run: runTUI,
		examples: []string{
			"tracelens tui trace.json",
			"tracelens tui base.json new.json",
			"tracelens tui runs/ddp/",
		}}
}

func runTUI(e *env, args []string) error {
	fs := newFlags("tui")
	pos, err := parseFlags(e, fs, tuiArgs, args)
	if err != nil {
		return err
	}
	if err := stdinOnce(pos); err != nil {
		return err
	}
	// Two arguments are BASE NEW (traces or runs); a directory, a pattern
	// or three or more rank files are a run.
	isRun := len(pos) != 2 && len(pos) > 0 && distributed.IsRun(pos)
	if len(pos) == 0 || len(pos) > 2 && !isRun {
		return usageError{fmt.Sprintf("expected TRACE, BASE NEW or a run's DIR, GLOB or rank files, got %d arguments", len(pos))}
	}
	runs := len(pos) == 2 && (distributed.IsRun(pos[:1]) || distributed.IsRun(pos[1:]))
	if runs && !(distributed.IsRun(pos[:1]) && distributed.IsRun(pos[1:])) {
		return usageError{"tui compares two runs or two traces, not a run with a trace"}
	}
	out, ok := stdoutFile(e)
	if !ok || !term.IsTerminal(int(out.Fd())) {
		return usageError{"the terminal UI needs a terminal on standard output (use top or info for text output)"}
	}
	keys, loader, closeKeys, err := tuiInput(e, pos, runs)
	if err != nil {
		return err
	}
	defer closeKeys()
	opts := tui.Options{Name: pos[len(pos)-1], Load: loader(pos[len(pos)-1]), Analyze: e.analyze}
	if e.stages != nil {
		opts.Stage = e.stageAt
	}
	if isRun {
		opts.Name = strings.Join(pos, " ")
		runTUIOptions(&opts, pos, quietEnv(e))
	}
	if len(pos) == 2 {
		opts.BaseName, opts.LoadBase = pos[0], loader(pos[0])
	}
	// Stopped for the memory budget, the UI first gives the terminal back
	// (the watchdog waits up to a second for it).
	stop, cancel := context.WithCancel(context.Background())
	defer cancel()
	done, stopping := make(chan struct{}), make(chan struct{})
	defer e.atStop(func() {
		close(stopping)
		cancel()
		select {
		case <-done:
		case <-time.After(time.Second):
		}
	})()
	opts.Stop = stop
	// The terminal itself, not the error-recording writer around it:
	// the UI asks it for its size and colours.
	err = tui.Run(opts, keys, out)
	close(done)
	select {
	case <-stopping:
		select {} // the watchdog ends the process with the budget's message
	default:
	}
	return err
}

// tuiInput returns where the UI reads keys and how it loads each
// argument. A trace on standard input (-) is read whole before the UI
// starts, and the keys then come from the terminal (/dev/tty); two runs
// (tui DIR DIR) load the rank that `diff DIR DIR` compares, as it does.
func tuiInput(e *env, pos []string, runs bool) (io.Reader, func(string) tui.Loader, func(), error) {
	q := quietEnv(e)
	loader := func(p string) tui.Loader { return tuiLoader(q, p) }
	if runs {
		loader = func(p string) tui.Loader {
			return func(func(read, total int64)) (*trace.Trace, error) {
				side, err := loadRunSide(q, p, &q.run)
				if err != nil {
					return nil, err
				}
				return side.t, nil
			}
		}
	}
	if !slices.Contains(pos, "-") {
		return e.stdin, loader, func() {}, nil
	}
	t, err := loadTrace(e, "-")
	if err != nil {
		return nil, nil, nil, err
	}
	tty, err := os.Open("/dev/tty")
	if err != nil {
		return nil, nil, nil, usageError{"the trace came on standard input, and there is no terminal (/dev/tty) to read keys from"}
	}
	fileLoader := loader
	loader = func(p string) tui.Loader {
		if p == "-" {
			return func(func(read, total int64)) (*trace.Trace, error) { return t, nil }
		}
		return fileLoader(p)
	}
	return tty, loader, func() { tty.Close() }, nil
}

// runTUIOptions sets the options of `tui RUN`: the run as one analysis
// (its findings ranked with the described rank's, as findings and report
// list them), and each rank read and analyzed with its peer waits; every
// trace read and analyzed with q's options (the command's flags).
func runTUIOptions(opts *tui.Options, pos []string, q *env) {
	var run *distributed.Run
	opts.LoadRun = func(func(read, total int64)) (*distributed.Result, error) {
		ra, err := loadRunAnalysis(q, pos, &q.run, q.cfg)
		if err != nil {
			return nil, err
		}
		// Read by RankConfig only after LoadRun returned: the UI loads a
		// rank once the run is shown.
		run = ra.run
		return ra.res, nil
	}
	opts.LoadRank = func(source string) tui.Loader { return tuiLoader(q, source) }
	opts.RankConfig = func(source string) analyze.Config {
		if run == nil {
			return analyze.Config{}
		}
		for i, r := range run.Ranks {
			if r.Source == source {
				return analyze.Config{PeerWait: run.PeerWaits(i)}
			}
		}
		return analyze.Config{}
	}
}

// tuiLoader reads path in the background, feeding the UI's progress bar,
// as loadTrace reads it for q's command: its model capped at q.maxMemory
// (--max-memory; 0: ingest's default), its steps from q.stepRange.
func tuiLoader(q *env, path string) tui.Loader {
	return func(progress func(read, total int64)) (*trace.Trace, error) {
		if strings.HasPrefix(path, embeddedPrefix) {
			return loadTrace(q, path)
		}
		// As every command reads (readOptions): a big trace's collector
		// limit made `top` one collection where the TUI's read, without
		// it, ran the collector all through.
		t, err := readWith(q, path, q.readOptions(path, false, progress))
		if err != nil || q.stepRange == "" {
			return t, err
		}
		if err := ingest.StepsFromRange(t, q.stepRange); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return t, nil
	}
}

// Command tracelens reads GPU profiler traces (Kineto/torch.profiler,
// JAX/XLA and Perfetto Chrome JSON) and answers the questions a GPU
// performance engineer asks of them: which kernels matter, how many launches,
// where the step time goes, and what to change first.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/termtext"
)

// Exit codes are part of the CLI contract: scripts and CI gates rely on them.
const (
	exitOK         = 0
	exitGate       = 1 // a regression gate tripped (diff --fail-on-regression)
	exitUsageOrBad = 2 // bad usage or unreadable input
)

// env is what a command may touch of the outside world. Commands never use
// os.Stdout and friends directly so tests can run them in-process.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// stderrTTY reports whether stderr is a terminal (progress bars go there).
	stderrTTY bool
	// maxMemory caps a trace's model in bytes (--max-memory; 0: ingest's
	// default, a share of physical memory).
	maxMemory int64
	// stepRange names the host ranges that are the steps (--step-range;
	// "": the steps the trace marks, else the analysis derives them).
	stepRange string
	// run holds --comm-kernel and the cross-rank checks --enable and
	// --disable select; cfg is the single-trace analyzers' selection.
	// declareTraceFlags declares them, parseFlags settles them, and every
	// analysis the command starts takes them.
	run runFlags
	cfg analyze.Config
	// wide prints whole names in text tables (--wide, -w).
	wide bool
	// helpFlags is the FlagSet whose -h parseFlags printed: how help and
	// completion learn a command's flags from its one declaration.
	helpFlags *flag.FlagSet
	// stages, if set ($TRACELENS_STAGES non-empty: stderr), receives
	// ingest's stage timings and the time the command took after reading,
	// for profiling; start is when main began.
	stages io.Writer
	start  time.Time
	// mem is the process's memory budget (memory.go); nil outside main.
	mem *memState
}

// command is one subcommand. Each lives in its own file; the table below
// lists them in the order `tracelens help` shows them.
type command struct {
	name    string
	args    string // argument synopsis, e.g. "[-n N] TRACE"
	summary string // one line for `tracelens help`
	run     func(e *env, args []string) error
	// examples are command lines `CMD -h` shows under "examples:".
	examples []string
}

// commands lists the subcommands in the order `tracelens help` shows
// them: a user's workflow, from looking at a trace to comparing runs.
func commands() []command {
	return []command{
		infoCommand(),
		topCommand(),
		findingsCommand(),
		analyzersCommand(),
		reportCommand(),
		diffCommand(),
		exportCommand(),
		annotateCommand(),
		tuiCommand(),
		mcpCommand(),
		captureCommand(),
		demoCommand(),
		completionCommand(),
		versionCommand(),
	}
}

// usageError marks errors caused by how the command was called: they exit 2
// and print the command's usage hint.
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

// exitError carries a specific exit status (e.g. 1 for a tripped gate) with
// the message that explains it.
type exitError struct {
	code int
	err  error
}

func (x exitError) Error() string { return x.err.Error() }
func (x exitError) Unwrap() error { return x.err }

func main() {
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, stderrTTY: isTerminal(os.Stderr), start: time.Now()}
	if os.Getenv("TRACELENS_STAGES") != "" {
		e.stages = os.Stderr
	}
	stopWatch := startMemoryBudget(e, os.Stderr)
	stopProfile := startCPUProfile(os.Stderr)
	code := runMain(e, os.Args[1:])
	stopProfile()
	stopWatch()
	e.stageAt("exit")
	os.Exit(code)
}

// runMain dispatches to a subcommand and turns its error into an exit code.
// It never lets a panic escape as a Go stack trace: a panic is a bug, but the
// user still gets one clear line and exit status 2.
func runMain(e *env, args []string) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(e.stderr, "tracelens: internal error: %v (please report this with the trace)\n", r)
			code = exitUsageOrBad
		}
	}()
	out := &outWriter{w: e.stdout}
	e.stdout = out
	defer func() {
		// Output that could not be written is a failure, whatever the
		// command made of it: the user or script did not get it.
		if out.err != nil && code != exitUsageOrBad {
			fmt.Fprintf(e.stderr, "tracelens: writing standard output: %v\n", out.err)
			code = exitUsageOrBad
		}
	}()
	cmds := commands()
	if len(args) == 0 {
		// No arguments: run the main job on the embedded sample trace, so a
		// fresh machine shows what the tool does with one command.
		args = []string{"demo"}
	}
	name := args[0]
	if name == "help" && len(args) > 1 {
		// help CMD is CMD -h.
		if len(args) > 2 || !slices.ContainsFunc(cmds, func(c command) bool { return c.name == args[1] }) {
			fmt.Fprintf(e.stderr, "tracelens help: want one command name, got %q\n\n", strings.Join(args[1:], " "))
			printHelp(e.stderr, cmds)
			return exitUsageOrBad
		}
		name, args = args[1], []string{args[1], "-h"}
	}
	if name == "help" || name == "-h" || name == "--help" {
		printHelp(e.stdout, cmds)
		return exitOK
	}
	if name == "--version" || name == "-version" {
		fmt.Fprintln(e.stdout, version())
		return exitOK
	}
	for _, c := range cmds {
		if c.name != name {
			continue
		}
		err := c.run(e, args[1:])
		if err == nil {
			return exitOK
		}
		var ue usageError
		var xe exitError
		switch {
		case errors.As(err, &ue):
			fmt.Fprintf(e.stderr, "tracelens %s: %s\nusage: tracelens %s %s\n", c.name, ue.msg, c.name, c.args)
			return exitUsageOrBad
		case errors.As(err, &xe):
			fmt.Fprintf(e.stderr, "tracelens: %s\n", termtext.Sanitize(xe.err.Error()))
			return xe.code
		case errors.Is(err, errHelpShown):
			return exitOK
		default:
			// File names and trace text reach errors raw: escape codes
			// and newlines are shown, not acted on (issue 27).
			fmt.Fprintf(e.stderr, "tracelens: %s\n", termtext.Sanitize(err.Error()))
			return exitUsageOrBad
		}
	}
	fmt.Fprintf(e.stderr, "tracelens: unknown command %q\n\n", name)
	printHelp(e.stderr, cmds)
	return exitUsageOrBad
}

func printHelp(w io.Writer, cmds []command) {
	fmt.Fprintln(w, "tracelens: find the bottleneck in a GPU profiler trace")
	fmt.Fprintln(w, "\nusage: tracelens COMMAND [flags] ARGS\n\ncommands:")
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'tracelens help COMMAND' (or 'tracelens COMMAND -h') for a command's flags and examples. With no command, tracelens runs 'demo'.")
}

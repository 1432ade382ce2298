package main

import (
	"errors"
	"flag"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/tracelens/tracelens/ingest"
)

// errHelpShown reports that -h printed a command's flags: exit 0, no message.
var errHelpShown = errors.New("help shown")

// newFlags returns a FlagSet whose errors come back as usageError instead of
// exiting the process, so every command reports bad flags the same way.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses args, allowing flags after positional arguments
// ("tracelens top trace.json -n 5" works like "top -n 5 trace.json").
func parseFlags(e *env, fs *flag.FlagSet, synopsis string, args []string) ([]string, error) {
	// Every command that reads traces takes the memory budget, and all
	// but export a step range.
	if fs.Lookup("max-memory") == nil && fs.Name() != "capture" && fs.Name() != "analyzers" {
		fs.Func("max-memory", "stop with exit 2 if a trace's model needs more than `SIZE`, or one JSON value (a string, an event) more than a quarter of it while it is read (e.g. 8GB; default: half of physical memory)", func(s string) error {
			n, err := ingest.ParseByteSize(s)
			e.maxMemory = n
			return err
		})
	}
	if fs.Lookup("step-range") == nil && fs.Name() != "capture" && fs.Name() != "analyzers" && fs.Name() != "export" {
		fs.StringVar(&e.stepRange, "step-range", "", "take the host ranges named `NAME` (NVTX or record_function) as the steps")
	}
	if wideFlagCommands[fs.Name()] && fs.Lookup("wide") == nil {
		fs.BoolVar(&e.wide, "wide", false, "print whole kernel and op names instead of cutting them to the column")
		fs.BoolVar(&e.wide, "w", false, "short for --wide")
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(e.stdout)
				e.stdout.Write([]byte("usage: tracelens " + fs.Name() + " " + synopsis + "\n\nflags:\n"))
				fs.PrintDefaults()
				return nil, errHelpShown
			}
			return nil, usageError{err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// wideFlagCommands are the commands that print text tables of names and so
// take --wide.
var wideFlagCommands = map[string]bool{"top": true, "diff": true, "findings": true, "demo": true}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

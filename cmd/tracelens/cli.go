package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

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
	readsTraces := !readsNoTraces[fs.Name()]
	if fs.Lookup("max-memory") == nil && readsTraces {
		fs.Func("max-memory", "cap the process's memory at `SIZE` (e.g. 8GB; default: half of physical or cgroup memory): reading, the model, the analysis, the output, a run's ranks and the TUI; exit 2 naming the file and the byte offset or stage when it would pass 1.15× of it, or when one JSON value (a string, an event) needs more than a quarter of it", func(s string) error {
			n, err := ingest.ParseByteSize(s)
			e.setMaxMemory(n)
			return err
		})
	}
	if fs.Lookup("step-range") == nil && readsTraces && fs.Name() != "export" {
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
				e.helpFlags = fs
				writeCommandHelp(e.stdout, fs, synopsis)
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

// readsNoTraces are the commands that read no trace, and so take neither
// --max-memory nor --step-range.
var readsNoTraces = map[string]bool{"capture": true, "analyzers": true, "completion": true, "version": true}

// wideFlagCommands are the commands that print text tables of names and so
// take --wide.
var wideFlagCommands = map[string]bool{"top": true, "diff": true, "findings": true, "demo": true}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// writeCommandHelp writes what `CMD -h` and `help CMD` show: the
// synopsis, the flags and the command's examples.
func writeCommandHelp(w io.Writer, fs *flag.FlagSet, synopsis string) {
	fmt.Fprintf(w, "usage: tracelens %s %s\n", fs.Name(), synopsis)
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprintln(w, "\nflags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	for _, c := range commands() {
		if c.name != fs.Name() || len(c.examples) == 0 {
			continue
		}
		fmt.Fprintln(w, "\nexamples:")
		for _, x := range c.examples {
			fmt.Fprintf(w, "  %s\n", x)
		}
	}
}

// commandFlags returns the flags command c declares, as its -h reads
// them: the one declaration that help and completion both show.
func commandFlags(c command) *flag.FlagSet {
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
	if err := c.run(e, []string{"-h"}); !errors.Is(err, errHelpShown) || e.helpFlags == nil {
		return newFlags(c.name)
	}
	return e.helpFlags
}

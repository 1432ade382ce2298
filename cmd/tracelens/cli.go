package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
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
	if readsTraces := !readsNoTraces[fs.Name()]; readsTraces {
		declareTraceFlags(e, fs)
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
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	if readsNoTraces[fs.Name()] {
		return pos, nil
	}
	cfg, err := e.run.selectAnalyzers(splitList(e.run.enableArg), splitList(e.run.disableArg))
	e.cfg = cfg
	return pos, err
}

// readsNoTraces are the commands that read no trace, and so take none of
// declareTraceFlags's flags.
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

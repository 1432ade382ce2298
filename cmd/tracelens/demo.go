package main

import (
	"fmt"

	"github.com/tracelens/tracelens/fixtures"
)

func demoCommand() command {
	return command{name: "demo", args: "", summary: "analyze the sample trace built into the binary (what `tracelens` alone runs)", run: runDemo}
}

func runDemo(e *env, args []string) error {
	fs := newFlags("demo")
	pos, err := parseFlags(e, fs, "", args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError{"demo takes no arguments"}
	}
	path := embeddedPrefix + fixtures.Default
	fmt.Fprintf(e.stdout, "tracelens demo: analyzing the embedded sample trace %s\n(an evolution-strategies MLP forward on an H100, recorded with torch.profiler)\n\n", fixtures.Default)
	return runTop(e, []string{"-n", "10", path})
}

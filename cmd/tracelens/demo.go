package main

import (
	"fmt"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/fixtures"
)

func demoCommand() command {
	return command{name: "demo", args: "", summary: "analyze the sample trace built into the binary (what `tracelens` alone runs)", run: runDemo,
		examples: []string{
			"tracelens demo",
			"tracelens",
		}}
}

// runDemo is the main job on the embedded sample: the kernel table and the
// findings, which is what a user runs on their own trace first.
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
	fmt.Fprintf(e.stdout, "tracelens demo: the embedded sample trace %s\n(an evolution-strategies MLP forward on an H100, recorded with torch.profiler;\nrun `tracelens top|findings|report|tui YOUR_TRACE` on your own)\n\n", fixtures.Default)
	t, err := loadTrace(e, path)
	if err != nil {
		return err
	}
	rows, all := analyze.KernelTable(t)
	launches := 0
	for _, r := range rows {
		launches += r.Count
	}
	writeTopText(e.stdout, topTable{t: t, rows: rows, matched: len(rows), shown: rows[:min(len(rows), 8)], all: all, launches: launches}, e.nameWidth(topNameWidth))
	r, err := e.analyzeWithin(path, t, e.cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	fmt.Fprintln(e.stdout)
	writeFindings(e.stdout, r, e.nameWidth(evidenceCellWidth))
	return nil
}

package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/distributed"
	"github.com/tracelens/tracelens/trace"
)

const findingsArgs = "[--enable a,b] [--disable c] TRACE"

func findingsCommand() command {
	return command{name: "findings", args: findingsArgs, summary: "what to fix first: findings with evidence, estimated saving and a concrete fix", run: runFindings}
}

func analyzersCommand() command {
	return command{name: "analyzers", args: "", summary: "list the analyzers behind findings, with what each detects and its thresholds", run: runAnalyzers}
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func runFindings(e *env, args []string) error {
	fs := newFlags("findings")
	enable := fs.String("enable", "", "run only these comma-separated `ANALYZERS` (see 'tracelens analyzers')")
	disable := fs.String("disable", "", "skip these comma-separated `ANALYZERS`")
	pos, err := parseFlags(e, fs, findingsArgs, args)
	if err != nil {
		return err
	}
	if distributed.IsRun(pos) {
		return runFindingsRun(e, pos, "text")
	}
	path, err := oneTrace(pos)
	if err != nil {
		return err
	}
	cfg := analyze.Config{Enable: splitList(*enable), Disable: splitList(*disable)}
	if _, err := analyze.Select(cfg.Enable, cfg.Disable); err != nil {
		return usageError{err.Error()}
	}
	t, err := loadTrace(e, path)
	if err != nil {
		return err
	}
	r, err := analyze.Run(t, cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	writeFindings(e.stdout, r)
	return nil
}

func writeFindings(w io.Writer, r *analyze.Result) {
	dev := r.Device
	if dev == "" {
		dev = "unknown device"
	}
	ss := r.StepStats
	steps := fmt.Sprintf("%d steps, median %s", ss.Count, usDur(ss.MedianWallUs))
	if r.Summary.StepsSynthetic {
		steps = "no steps marked: whole trace " + usDur(ss.MedianWallUs)
	}
	fmt.Fprintf(w, "%s on %s: %s, GPU busy %.0f%%, %d kernel launches\n", r.Source, dev, steps, r.Summary.GPUBusyShare*100, r.Summary.KernelLaunches)
	if len(r.Findings) == 0 {
		fmt.Fprintf(w, "\nno findings (analyzers run: %s)\n", strings.Join(r.Analyzers, ", "))
		return
	}
	for i, f := range r.Findings {
		fmt.Fprintf(w, "\n%d. [%s] %s\n", i+1, f.ID, f.Title)
		fmt.Fprintf(w, "   severity %s, confidence %s, saves ~%s per step (%.0f%% of the step)\n", f.Severity, f.Confidence, usDur(f.SavingUs), f.Share*100)
		for _, ev := range f.Evidence {
			if ev.Text != "" {
				fmt.Fprintf(w, "   - %s\n", ev.Text)
			}
			if ev.Table != nil {
				writeEvidenceTable(w, ev.Table)
			}
		}
		fmt.Fprintf(w, "   fix: %s\n", f.Fix)
	}
}

// evidenceCellWidth bounds a table cell so kernel names do not wrap.
const evidenceCellWidth = 48

func writeEvidenceTable(w io.Writer, tb *analyze.Table) {
	widths := make([]int, len(tb.Header))
	// Long kernel names are cut in the middle; the last column (a Python
	// line or a description) is left whole since nothing follows it.
	cell := func(s string, i int) string {
		if i == len(widths)-1 {
			return ShortenName(s, len(s))
		}
		return ShortenName(s, evidenceCellWidth)
	}
	for i, h := range tb.Header {
		widths[i] = len([]rune(h))
	}
	for _, row := range tb.Rows {
		for i := range min(len(row), len(widths)) {
			widths[i] = max(widths[i], len([]rune(cell(row[i], i))))
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		b.WriteString("     ")
		for i := range min(len(cells), len(widths)) {
			c := cell(cells[i], i)
			b.WriteString(c)
			if i < len(widths)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-len([]rune(c))+2))
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	line(tb.Header)
	for _, row := range tb.Rows {
		line(row)
	}
}

func runAnalyzers(e *env, args []string) error {
	fs := newFlags("analyzers")
	pos, err := parseFlags(e, fs, "", args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError{"analyzers takes no arguments"}
	}
	for _, a := range analyze.All() {
		fmt.Fprintf(e.stdout, "%s\n%s\n\n", a.Name, wrapText(a.Doc, 78, "    "))
	}
	return nil
}

// wrapText wraps s at width columns, indenting every line.
func wrapText(s string, width int, indent string) string {
	var b strings.Builder
	col := 0
	for _, word := range strings.Fields(s) {
		n := len([]rune(word))
		if col > 0 && col+1+n > width {
			b.WriteString("\n")
			col = 0
		}
		if col == 0 {
			b.WriteString(indent)
			col = len(indent)
		} else {
			b.WriteString(" ")
			col++
		}
		b.WriteString(word)
		col += n
	}
	return b.String()
}

// usDur formats microseconds (the unit of analyze results) as a duration.
func usDur(v float64) string { return trace.Duration(v*1e3 + 0.5).String() }

package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/distributed"
	"github.com/tracelens/tracelens/findingtext"
	"github.com/tracelens/tracelens/jsonout"
	"github.com/tracelens/tracelens/termtext"
)

const findingsArgs = "[--format text|json] [--enable a,b] [--disable c] TRACE"

func findingsCommand() command {
	return command{name: "findings", args: findingsArgs, summary: "what to fix first: findings with evidence, estimated saving and a concrete fix", run: runFindings,
		examples: []string{
			"tracelens findings trace.json",
			"tracelens findings --format json trace.json | jq .findings[0]",
			"tracelens findings --enable fusion-candidate,launch-bound trace.json",
			"tracelens findings runs/ddp/",
		}}
}

const analyzersArgs = "[--long]"

func analyzersCommand() command {
	return command{name: "analyzers", args: analyzersArgs, summary: "list the analyzers behind findings, with what each detects and its thresholds", run: runAnalyzers,
		examples: []string{
			"tracelens analyzers",
			"tracelens analyzers --long",
		}}
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
	format := fs.String("format", "text", "output `FORMAT`: text, or json (analyze's Result, as report --format json)")
	pos, err := parseFlags(e, fs, findingsArgs, args)
	if err != nil {
		return err
	}
	rf := &e.run
	if *format != "text" && *format != "json" {
		return usageError{fmt.Sprintf("unknown --format %q (want text or json)", *format)}
	}
	cfg := e.cfg
	if distributed.IsRun(pos) {
		return runFindingsRun(e, pos, rf, *format, cfg)
	}
	path, err := oneTrace(pos)
	if err != nil {
		return err
	}
	t, err := loadTrace(e, path)
	if err != nil {
		return err
	}
	r, err := e.analyzeWithin(path, t, cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if *format == "json" {
		return jsonout.Write(e.stdout, r)
	}
	writeFindings(e.stdout, r, e.nameWidth(evidenceCellWidth))
	return nil
}

// writeFindings prints the headline and every finding as text. Every
// figure comes formatted from analyze's typed values, as in the other
// faces.
func writeFindings(w io.Writer, r *analyze.Result, width int) {
	fmt.Fprintln(w, headline(r))
	if len(r.Findings) == 0 {
		fmt.Fprintf(w, "\nno findings (analyzers run: %s)\n", strings.Join(r.Analyzers, ", "))
		writeCorrections(w, r)
		return
	}
	for i, f := range r.Findings {
		fmt.Fprintf(w, "\n%d. [%s] %s\n", i+1, f.ID, findingtext.Title(&f))
		if len(f.Ranks) > 0 {
			fmt.Fprintf(w, "   ranks %s\n", rankList(f.Ranks))
		}
		fmt.Fprintf(w, "   severity %s, confidence %s, %s\n", f.Severity, f.Confidence, findingtext.Saving(r, &f))
		for _, ev := range f.Evidence {
			if ev.Text != "" {
				fmt.Fprintf(w, "   - %s\n", termtext.Sanitize(ev.Text))
			}
			if ev.Table != nil {
				writeEvidenceTable(w, ev.Table, width)
			}
		}
		fmt.Fprintf(w, "   fix: %s\n", findingtext.Fix(&f))
	}
	if r.Summary.CombinedSavingUs > 0 || len(r.Findings) > 1 {
		fmt.Fprintf(w, "\n%s\n", combinedText(r))
	}
	writeCorrections(w, r)
}

// writeCorrections lists what analyze withheld because it could not be
// true, so a reader knows a figure is missing and why.
func writeCorrections(w io.Writer, r *analyze.Result) {
	for _, c := range r.Corrections {
		fmt.Fprintf(w, "withheld (cannot be true; please report): %s\n", c)
	}
}

// headline is the one-line summary of a trace: the steady-state step,
// GPU busy and kernels per step as analyze defines them.
func headline(r *analyze.Result) string {
	dev := r.Device
	if dev == "" {
		dev = "unknown device"
	}
	steps := fmt.Sprintf("%d steps", r.StepStats.Count)
	if r.StepStats.Count == 1 {
		steps = "1 step"
	}
	if r.Summary.StepsSynthetic {
		steps = "no steps marked"
	}
	line := fmt.Sprintf("%s on %s: %s, %s, %d kernel launches", termtext.Sanitize(r.Source), termtext.Sanitize(dev), steps, r.Headline(), r.Summary.KernelLaunches)
	if r.HasPhaseSplit() {
		ss := r.StepStats
		line += fmt.Sprintf("; kernel time per step forward %s / backward %s / optimizer %s", analyze.FormatUs(ss.MedianForwardUs),
			analyze.FormatUs(ss.MedianBackwardUs), analyze.FormatUs(ss.MedianOptimizerUs))
	}
	return line
}

// combinedText states what fixing every finding would save, and which
// findings overlap.
func combinedText(r *analyze.Result) string {
	s := fmt.Sprintf("all findings fixed: ~%s per step (%s of the step)", analyze.FormatUs(r.Summary.CombinedSavingUs),
		analyze.FormatShare(r.Summary.CombinedSavingShare))
	for _, o := range r.Overlaps {
		ids := make([]string, len(o.Findings))
		for i, n := range o.Findings {
			ids[i] = fmt.Sprintf("%d", n+1)
		}
		s += fmt.Sprintf("\n  findings %s overlap (all save %s time): together ~%s, not the %s their savings add up to",
			strings.Join(ids, ", "), analyze.SavingFromText(o.SavingFrom), analyze.FormatUs(o.CombinedUs), analyze.FormatUs(o.SumUs))
	}
	return s
}

// evidenceCellWidth bounds a table cell so kernel names do not wrap.
const evidenceCellWidth = 48

// writeEvidenceTable writes a finding's evidence table, names cut to
// width runes (0: whole, --wide) and distinct within their column.
func writeEvidenceTable(w io.Writer, tb *analyze.Table, width int) {
	header := make([]string, len(tb.Columns))
	for i, c := range tb.Columns {
		header[i] = c.Name
	}
	rows := make([][]string, len(tb.Rows))
	for i, row := range tb.Rows {
		rows[i] = make([]string, len(row))
		for j, v := range row {
			rows[i][j] = v.String()
		}
	}
	// Long kernel names are cut in the middle, never so that two rows
	// read alike; the last column (a Python line or a description) is
	// left whole since nothing follows it.
	for j := range max(len(header)-1, 0) {
		col := make([]string, len(rows))
		for i, row := range rows {
			if j < len(row) {
				col[i] = row[j]
			}
		}
		for i, c := range termtext.DistinctNames(col, col, width) {
			if j < len(rows[i]) {
				rows[i][j] = c
			}
		}
	}
	widths := make([]int, len(header))
	cell := func(s string, i int) string { return termtext.Sanitize(s) }
	for i, h := range header {
		widths[i] = len([]rune(h))
	}
	for _, row := range rows {
		for i := range min(len(row), len(widths)) {
			widths[i] = max(widths[i], len([]rune(cell(row[i], i))))
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		b.WriteString("     ")
		for i := range min(len(cells), len(widths)) {
			c := cell(cells[i], i)
			pad := strings.Repeat(" ", widths[i]-len([]rune(c)))
			if tb.Columns[i].Kind.Numeric() {
				c = pad + c
			} else if i < len(widths)-1 {
				c += pad
			}
			b.WriteString(c)
			if i < len(widths)-1 {
				b.WriteString("  ")
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	line(header)
	for _, row := range rows {
		line(row)
	}
}

func runAnalyzers(e *env, args []string) error {
	fs := newFlags("analyzers")
	long := fs.Bool("long", false, "say in full what each analyzer detects, its saving model and its thresholds")
	pos, err := parseFlags(e, fs, analyzersArgs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError{"analyzers takes no arguments"}
	}
	type entry struct {
		name, doc string
		runsOnly  bool
	}
	var all []entry
	for _, a := range analyze.All() {
		all = append(all, entry{a.Name, a.Doc, false})
	}
	// The cross-rank checks run on a run's directory (findings, report,
	// tui DIR) and take the same --enable/--disable.
	for _, c := range distributed.Checks() {
		all = append(all, entry{c.Name, c.Doc, true})
	}
	if *long {
		for _, a := range all {
			mark := ""
			if a.runsOnly {
				mark = " (cross-rank: runs only)"
			}
			fmt.Fprintf(e.stdout, "%s%s\n%s\n\n", a.name, mark, wrapText(a.doc, 78, "    "))
		}
		return nil
	}
	width := 0
	for _, a := range all {
		width = max(width, utf8.RuneCountInString(a.name))
	}
	for _, a := range all {
		mark := ""
		if a.runsOnly {
			mark = "runs only: "
		}
		fmt.Fprintf(e.stdout, "%-*s  %s%s\n", width, a.name, mark, firstSentence(a.doc, analyzersLineWidth-width-2-utf8.RuneCountInString(mark)))
	}
	fmt.Fprintln(e.stdout, "\nIn full: tracelens analyzers --long. findings --enable and --disable take these names.")
	return nil
}

// analyzersLineWidth bounds a line of the short analyzer list.
const analyzersLineWidth = 100

// firstSentence is the first sentence of doc, cut at a word to fit width
// runes (with "…" where cut).
func firstSentence(doc string, width int) string {
	s := strings.Join(strings.Fields(doc), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSuffix(s, ".")
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	r := []rune(s)[:max(width-1, 1)]
	if i := strings.LastIndexByte(string(r), ' '); i > 0 {
		return strings.TrimRight(string(r)[:i], ",;:(") + "…"
	}
	return string(r) + "…"
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

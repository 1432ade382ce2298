package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/tracelens/tracelens/analyze"
)

// The step ledger (analyze.Step.Ledger, StepStats.SteadyLedger) as the
// report shows it: the steady step's lines with their shares, one row
// per step in the step breakdown, the lines each finding draws on, and in
// HTML a stacked bar per step. Every figure is analyze's; a share is a
// line's time over the wall it is part of.

// ledgerShare is a line's time as a share of the wall it is part of.
func ledgerShare(us, wall float64) float64 {
	if wall <= 0 {
		return 0
	}
	return us / wall
}

// nonZeroLines returns the lines of l with time in them, in ledger order.
func nonZeroLines(l []analyze.LedgerEntry) []analyze.LedgerEntry {
	var out []analyze.LedgerEntry
	for _, e := range l {
		if e.Us > 0 {
			out = append(out, e)
		}
	}
	return out
}

// hasLedger reports whether analyze split the steady step into ledger
// lines (a trace without steps has none).
func hasLedger(r *analyze.Result) bool {
	return len(r.Steps) > 0 && r.StepStats.SteadyWallUs > 0 && len(nonZeroLines(r.StepStats.SteadyLedger)) > 0
}

// stepLedger writes "Where the step's time goes": the steady step's
// ledger, each non-zero line with its time and share, and the step's
// total, which is the step the rest of the report quotes.
func (d *doc) stepLedger(r *analyze.Result) {
	if !hasLedger(r) {
		return
	}
	ss := r.StepStats
	h := r.Headline()
	d.heading(2, "Where the step's time goes")
	d.para("The step (%s, %s) split into lines that exclude each other and add up to it: an instant counts towards the GPU's own work first, "+
		"then towards other GPU work, and, while the GPU is idle, towards what the host was doing.", h.Step, h.StepNote)
	d.chart("", func() string {
		return ledgerBarsSVG("The step: "+h.Step+" ("+h.StepNote+")", []ledgerBar{{label: "the step", wall: ss.SteadyWallUs, ledger: ss.SteadyLedger}}, true)
	})
	tb := newTable(left("Line"), right("Time"), right("Share of the step"))
	for _, e := range nonZeroLines(ss.SteadyLedger) {
		tb.add(analyze.LedgerLineText(e.Line), us(e.Us), pct(ledgerShare(e.Us, ss.SteadyWallUs)))
	}
	tb.add("**the step**", "**"+us(ss.SteadyWallUs)+"**", "**"+pct(1)+"**")
	d.table(tb)
}

// ledgerColumns returns the lines with time in any of the steps or in the
// steady ledger, in ledger order.
func ledgerColumns(r *analyze.Result) []string {
	used := map[string]bool{}
	for _, e := range nonZeroLines(r.StepStats.SteadyLedger) {
		used[e.Line] = true
	}
	for _, s := range r.Steps {
		for _, e := range nonZeroLines(s.Ledger) {
			used[e.Line] = true
		}
	}
	var out []string
	for _, line := range analyze.LedgerLines() {
		if used[line] {
			out = append(out, line)
		}
	}
	return out
}

// ledgerCells returns the times of the named lines in ledger l.
func ledgerCells(l []analyze.LedgerEntry, lines []string) []string {
	out := make([]string, len(lines))
	for i, line := range lines {
		out[i] = us(analyze.LedgerUs(l, line))
	}
	return out
}

// shownSteps returns the indexes of the steps the step tables list: all
// of them up to 12, else the first 8 and the last 3; skipped is how many
// were left out after the eighth.
func shownSteps(n int) (idx []int, skipped int) {
	const maxRows = 12
	for i := range n {
		if n > maxRows && i >= 8 && i < n-3 {
			continue
		}
		idx = append(idx, i)
	}
	if n > maxRows {
		skipped = n - 11
	}
	return idx, skipped
}

// stepsLedger writes each step's ledger in the step breakdown: one row
// per step with its wall and the time of each line that has any in some
// step, then the steady step's; in HTML, a stacked bar per step.
func (d *doc) stepsLedger(r *analyze.Result) {
	if !hasLedger(r) {
		return
	}
	lines := ledgerColumns(r)
	cols := []column{left("Step"), right("Wall")}
	for _, line := range lines {
		cols = append(cols, right(analyze.LedgerLineText(line)))
	}
	d.para("Each step's wall split into the lines of the step's ledger (above): each row adds up to its wall.")
	tb := newTable(cols...)
	idx, skipped := shownSteps(len(r.Steps))
	var bars []ledgerBar
	for k, i := range idx {
		if skipped > 0 && k == 8 {
			tb.add(append([]string{fmt.Sprintf("… %d more", skipped), ""}, make([]string, len(lines))...)...)
		}
		s := r.Steps[i]
		name := fmt.Sprintf("#%d", s.Number)
		if s.Synthetic {
			name = "whole trace"
		}
		tb.add(append([]string{name, us(s.WallUs)}, ledgerCells(s.Ledger, lines)...)...)
		bars = append(bars, ledgerBar{label: name, wall: s.WallUs, ledger: s.Ledger})
	}
	ss := r.StepStats
	if len(r.Steps) >= 2 {
		tb.add(append([]string{"**the\u00a0step**", us(ss.SteadyWallUs)}, ledgerCells(ss.SteadyLedger, lines)...)...)
	}
	d.table(tb)
	if len(bars) >= 2 {
		d.chart("", func() string {
			return ledgerBarsSVG("Each step's wall by ledger line (each bar is its step's wall)", bars, false)
		})
	}
}

// drawsOn names the ledger lines a finding's saving draws on, in words,
// and the time they hold in the steady step (the most the saving can be).
func drawsOn(r *analyze.Result, f analyze.Finding) string {
	words := make([]string, len(f.LedgerLines))
	for i, line := range f.LedgerLines {
		words[i] = analyze.LedgerLineText(line)
	}
	return fmt.Sprintf("%s (lines of the step's ledger holding %s of it)", strings.Join(words, ", "), us(analyze.LedgerUs(r.StepStats.SteadyLedger, f.LedgerLines...)))
}

// ledgerClass is the CSS class of a ledger line's colour; a line this
// build does not know gets the unexplained-idle grey.
func ledgerClass(line string) string {
	for _, l := range analyze.LedgerLines() {
		if l == line {
			return "l-" + strings.ReplaceAll(line, "_", "-")
		}
	}
	return "l-idle"
}

// ledgerBar is one stacked bar: a step's (or the steady step's) ledger.
type ledgerBar struct {
	label  string
	wall   float64
	ledger []analyze.LedgerEntry
}

// ledgerBarsSVG draws each bar as one row of segments, one per non-zero
// line, their widths proportional to the line's time in the step: every
// bar spans its step's wall (printed after it), so steps of any length
// compare by their split, and a long warm-up step does not shrink the
// others to slivers. Each segment's title gives its line, time and share
// of the step; a legend names the lines drawn (with their times and
// shares when one bar is drawn, the steady step's).
func ledgerBarsSVG(title string, bars []ledgerBar, single bool) string {
	const width, labelW, textW, rowH, top = 960, 90, 80, 30, 30
	span := float64(width - labelW - textW)
	if len(bars) == 0 {
		return ""
	}
	var body strings.Builder
	used := map[string]bool{}
	for i, br := range bars {
		y := top + i*rowH
		fmt.Fprintf(&body, `<text class="label" x="%d" y="%d" text-anchor="end">%s</text>`, labelW-8, y+19, esc(br.label))
		x := float64(labelW)
		for _, e := range nonZeroLines(br.ledger) {
			used[e.Line] = true
			w := ledgerShare(e.Us, br.wall) * span
			fmt.Fprintf(&body, `<rect class="%s" x="%.2f" y="%d" width="%.2f" height="%d"><title>%s %s: %s, %s of the step</title></rect>`,
				ledgerClass(e.Line), x, y+4, w, rowH-6, esc(br.label), esc(analyze.LedgerLineText(e.Line)), esc(us(e.Us)), esc(pct(ledgerShare(e.Us, br.wall))))
			x += w
		}
		fmt.Fprintf(&body, `<text class="value" x="%.1f" y="%d">%s</text>`, x+6, y+19, esc(us(br.wall)))
	}
	var legend []analyze.LedgerEntry
	ref := bars[0]
	for _, line := range analyze.LedgerLines() {
		if used[line] {
			legend = append(legend, analyze.LedgerEntry{Line: line, Us: analyze.LedgerUs(ref.ledger, line)})
		}
	}
	legendTop := top + len(bars)*rowH + 10
	items, rows := ledgerLegend(legend, ref.wall, single, width, legendTop)
	h := legendTop + rows*20 + 4
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart ledger" role="img" viewBox="0 0 %d %d" width="%d" height="%d">`, width, h, width, h)
	fmt.Fprintf(&b, `<title>%s</title><text class="title" x="0" y="18">%s</text>`, esc(title), esc(title))
	b.WriteString(body.String())
	b.WriteString(items)
	b.WriteString(`</svg>`)
	return b.String()
}

// ledgerLegend lays out a swatch and a name per line, wrapping at width,
// from y = top; with withTimes each name carries its time and share of
// wall. It returns the SVG and the number of rows it takes.
func ledgerLegend(lines []analyze.LedgerEntry, wall float64, withTimes bool, width, top int) (string, int) {
	var b strings.Builder
	x, rows := 0.0, 1
	for _, e := range lines {
		text := analyze.LedgerLineText(e.Line)
		if withTimes {
			text += " " + us(e.Us) + " · " + pct(ledgerShare(e.Us, wall))
		}
		// About 6.3 px per character of the 12 px chart font.
		w := 18 + 6.3*float64(len([]rune(text))) + 20
		if x > 0 && x+w > float64(width) {
			x, rows = 0, rows+1
		}
		y := top + (rows-1)*20
		fmt.Fprintf(&b, `<rect class="%s" x="%.1f" y="%d" width="12" height="12"/>`, ledgerClass(e.Line), x, y)
		fmt.Fprintf(&b, `<text class="legend" x="%.1f" y="%d">%s</text>`, x+18, y+11, esc(text))
		x += math.Ceil(w)
	}
	return b.String(), rows
}

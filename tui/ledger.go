package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/tracelens/tracelens/analyze"
)

// The step ledger on the overview: the steady step's lines
// (analyze's StepStats.SteadyLedger) as one stacked bar in ledger order,
// then the lines with the most time, each with its time and share of the
// step. The colours follow the HTML report's legend: the GPU's own lines
// green and blue, the host's lines while the GPU is idle warm, unexplained
// idle grey.

// ledgerColours colours each ledger line (light, dark), in the order of
// analyze.LedgerLines.
var ledgerColours = map[string]lipgloss.AdaptiveColor{
	analyze.LineGPUCompute:    {Light: "28", Dark: "34"},
	analyze.LineCommunication: {Light: "25", Dark: "33"},
	analyze.LineCopies:        {Light: "71", Dark: "114"},
	analyze.LineCompile:       {Light: "30", Dark: "37"},
	analyze.LineOtherSteps:    {Light: "74", Dark: "117"},
	analyze.LineBeforeProfile: {Light: "19", Dark: "27"},
	analyze.LineHostSync:      {Light: "160", Dark: "203"},
	analyze.LineDataLoading:   {Light: "136", Dark: "178"},
	analyze.LineProfiler:      {Light: "94", Dark: "130"},
	analyze.LineLaunch:        {Light: "166", Dark: "208"},
	analyze.LineFramework:     {Light: "125", Dark: "170"},
	analyze.LineIdle:          colGrey,
}

// ledgerStyles returns the style of each ledger line from renderer-bound
// foreground styles.
func ledgerStyles(fg func(lipgloss.TerminalColor) lipgloss.Style) map[string]lipgloss.Style {
	out := make(map[string]lipgloss.Style, len(ledgerColours))
	for line, c := range ledgerColours {
		out[line] = fg(c)
	}
	return out
}

// ledgerChars are the bar's characters by a line's rank in time: the
// three lines with the most time differ without colour too, the rest
// share the last.
var ledgerChars = []string{"█", "▓", "▒", "░"}

// ledgerItem is one drawn line of the steady step's ledger.
type ledgerItem struct {
	line  string
	us    float64
	share float64
	char  string
}

// steadyLedger returns the steady step's lines with time in them, in
// ledger order, each with its share of the step and its bar character.
func steadyLedger(r *analyze.Result) []ledgerItem {
	ss := &r.StepStats
	if len(r.Steps) == 0 || ss.SteadyWallUs <= 0 {
		return nil
	}
	var out []ledgerItem
	for _, e := range ss.SteadyLedger {
		if e.Us > 0 {
			out = append(out, ledgerItem{line: e.Line, us: e.Us, share: e.Us / ss.SteadyWallUs})
		}
	}
	for rank, i := range byTime(out) {
		out[i].char = ledgerChars[min(rank, len(ledgerChars)-1)]
	}
	return out
}

// byTime returns the indexes of items, the most time first (ledger order
// among equals).
func byTime(items []ledgerItem) []int {
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(items[b].us, items[a].us) })
	return idx
}

// ledger returns the overview's ledger lines at width w: the bar (barW
// cells after a labelW label) with the step's time, and a legend of the
// lines with the most time first, as many whole items as fit.
func ledger(r *analyze.Result, st *styles, w, labelW, barW int) []string {
	items := steadyLedger(r)
	if len(items) == 0 {
		return nil
	}
	parts := make([]part, len(items))
	chars := make([]string, len(items))
	for i, it := range items {
		parts[i] = part{label: it.line, us: it.us, style: st.ledgerLine(it.line)}
		chars[i] = it.char
	}
	h := r.Headline()
	b := stackedBar(parts, barW, chars)
	out := []string{fit("Step ledger", labelW) + b + cut(" "+h.Step+" ("+h.StepNote+") by line", w-labelW-width(b))}
	order := byTime(items)
	var legend []string
	room := w - labelW
	for _, i := range order {
		it := items[i]
		text := fmt.Sprintf("%s %s %s %s", it.char, analyze.LedgerLineText(it.line), us(it.us), analyze.FormatShare(it.share))
		need := width(text)
		if len(legend) > 0 {
			need += 3
		}
		if need > room {
			break
		}
		room -= need
		legend = append(legend, st.ledgerLine(it.line).Render(text))
	}
	if len(legend) < len(items) && room >= 4 {
		legend = append(legend, "…")
	}
	out = append(out, strings.Repeat(" ", labelW)+strings.Join(legend, " · "))
	return out
}

// ledgerLine is the style of a ledger line.
func (st *styles) ledgerLine(line string) lipgloss.Style {
	if s, ok := st.ledger[line]; ok {
		return s
	}
	return st.low
}

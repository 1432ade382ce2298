package tui

import (
	"fmt"
	"math"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/tracelens/tracelens/analyze"
)

// overviewScreen is screen 1: the trace at a glance, filling the
// terminal: the step times as a sparkline, where the step's time goes, GPU time by category, and the findings ranked by saving in the
// rest of the screen (Enter opens one on screen 4). Every figure is
// analyze's; the screen only draws them.
type overviewScreen struct {
	d        *data
	findings *table
}

func newOverview(d *data) *overviewScreen {
	fs := d.res.Findings
	titles := make([]string, len(fs))
	for i := range fs {
		titles[i] = sanitize(fs[i].Title)
	}
	cols := []column{
		{title: "#", width: 2, right: true},
		{title: "SEVERITY", width: 8, style: func(row int, st *styles) lipgloss.Style { return st.severity(fs[row].Severity) }},
		{title: "TOP FINDINGS", prose: true},
		{title: "SAVING/STEP", width: 11, right: true},
		{title: "SHARE", width: 6, right: true, drop: 1},
	}
	fields := []findingField{fieldRank, fieldSeverity, fieldTitle, fieldSaving, fieldShare}
	cell := func(row, col int) string { return findingText(fs, titles, row, fields[col]) }
	// Findings are ranked by saving already: the base order is theirs.
	return &overviewScreen{d: d, findings: newTable(cols, nil, orderBy(len(fs), func(a, b int) int { return 0 }), -1, cell)}
}

// sparks draws values as a sparkline, one character each, scaled from 0
// so that equal bars mean equal times.
func sparks(vals []float64) []string {
	const ticks = "▁▂▃▄▅▆▇█"
	tr := []rune(ticks)
	hi := 0.0
	for _, v := range vals {
		hi = max(hi, v)
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		k := len(tr) - 1
		if hi > 0 {
			k = min(max(int(v/hi*float64(len(tr))), 1), len(tr)) - 1
		}
		out[i] = string(tr[k])
	}
	return out
}

// downsample keeps at most n values, each the largest of its bucket, so a
// slow step is never averaged away.
func downsample(vals []float64, n int) []float64 {
	if len(vals) <= n || n <= 0 {
		return vals
	}
	out := make([]float64, n)
	for i := range out {
		lo, hi := i*len(vals)/n, (i+1)*len(vals)/n
		for _, v := range vals[lo:hi] {
			out[i] = max(out[i], v)
		}
	}
	return out
}

// part is one segment of a stacked bar.
type part struct {
	label string
	us    float64
	style lipgloss.Style
}

// stackedBar draws parts as one bar of w cells, each part's cells in its
// style and its own character (so the split reads without colour too),
// followed by nothing: the legend is drawn by the caller.
func stackedBar(parts []part, w int, chars []string) string {
	total := 0.0
	for _, p := range parts {
		total += max(p.us, 0)
	}
	if total <= 0 || w <= 0 {
		return ""
	}
	var b strings.Builder
	used, acc := 0, 0.0
	for i, p := range parts {
		acc += max(p.us, 0)
		end := int(math.Round(acc / total * float64(w)))
		if n := end - used; n > 0 {
			b.WriteString(p.style.Render(strings.Repeat(chars[i%len(chars)], n)))
			used = end
		}
	}
	return b.String()
}

// header is the fixed block above the findings, at width w: the trace,
// its steps, where the step's time goes, per-step counts, memory and GPU
// time by category.
func (s *overviewScreen) header(w int, st *styles) []string {
	d := s.d
	r := d.res
	sm := &r.Summary
	var out []string
	add := func(l string) { out = append(out, l) }
	addf := func(format string, a ...any) { add(cut(fmt.Sprintf(format, a...), w)) }
	device := r.Device
	if device == "" {
		device = "unknown device"
	}
	if dev := d.t.Device(0); dev != nil && dev.NumSMs > 0 {
		device += fmt.Sprintf(" (%d SMs)", dev.NumSMs)
	}
	add(st.header.Render(cut(fmt.Sprintf("%s · %s (%s) · %s", d.name, sanitize(sm.Format), sanitize(sm.Framework), sanitize(device)), w)))
	add("")
	const labelW = 12
	barW := max(w-labelW-2, 10)
	ss := &r.StepStats
	h := r.Headline()
	out = append(out, stepLines(r, st, w, labelW, barW)...)
	// Bars leave room for their legend; on a narrow terminal they go.
	smallW := min(barW-44, 40)
	bar := func(label string, parts []part, chars []string, text string) {
		b := stackedBar(parts, smallW, chars)
		add(fit(label, labelW) + b + cut(text, w-labelW-width(b)))
	}
	bar("GPU", []part{{us: ss.SteadyGPUBusyUs, style: st.gpuLane}, {us: ss.SteadyGPUIdleUs, style: st.idleLane}}, []string{"█", "░"},
		fmt.Sprintf(" busy %s of the step; over the whole trace %s of %s wall", h.GPUBusy, us(sm.GPUBusyUs), us(sm.WallUs)))
	// Where the step's time goes: analyze's medians over the steady state
	// (each a median of its own, so they need not add up to the step).
	parts := []part{
		{"GPU busy", ss.SteadyGPUBusyUs, st.gpuLane},
		{"idle in launch gaps", ss.SteadyLaunchGapUs, st.warn},
		{"in long gaps", ss.SteadyLongGapUs, st.bad},
	}
	bar("Step split", parts, []string{"█", "▒", "░"}, " "+h.Step+" ("+h.StepNote+")")
	add(cut(strings.Repeat(" ", labelW)+legend(parts), w))
	// The step's ledger: lines that add up to the step (analyze's).
	for _, l := range ledger(r, st, w, labelW, smallW) {
		add(cut(l, w))
	}
	if r.HasPhaseSplit() {
		// Kernel time per step by the part of the training step that
		// launched it: analyze's medians after the first step.
		phases := []part{
			{"forward", ss.MedianForwardUs, st.gpuLane},
			{"backward", ss.MedianBackwardUs, st.warn},
			{"optimizer", ss.MedianOptimizerUs, st.annLane},
		}
		bar("Phases", phases, []string{"█", "▓", "▒"}, " "+legend(phases))
	}
	addf("%-*s %s kernels, %s launches, GPU busy %s (medians)", labelW-1, "Per step", h.KernelsPerStep,
		analyze.FormatCount(ss.SteadyLaunches), analyze.FormatUs(ss.SteadyGPUBusyUs))
	addf("%-*s %d launches, %d distinct, %s; %d memcpy (%s), %d memset", labelW-1, "Kernels", sm.KernelLaunches, sm.DistinctKernels,
		us(sm.GPUKernelUs), sm.Memcpys, us(sm.MemcpyUs), sm.Memsets)
	out = append(out, memoryLines(r, st, w, labelW)...)
	out = append(out, categoryLines(r, st, w, labelW, barW)...)
	add("")
	return out
}

// stepLines are the overview's step count and step time (the headline's)
// and a sparkline of every step's wall time, slow steps coloured.
func stepLines(r *analyze.Result, st *styles, w, labelW, barW int) []string {
	var out []string
	add := func(l string) { out = append(out, l) }
	addf := func(format string, a ...any) { add(cut(fmt.Sprintf(format, a...), w)) }
	sm, ss, h := &r.Summary, &r.StepStats, r.Headline()
	switch {
	case len(r.Steps) == 0:
		addf("%-*s none: the trace has no timed events", labelW-1, "Steps")
	case sm.StepsSynthetic:
		addf("%-*s none marked (no ProfilerStep#N): step %s (%s)", labelW-1, "Steps", h.Step, h.StepNote)
	default:
		first, last := r.Steps[0].Number, r.Steps[len(r.Steps)-1].Number
		addf("%-*s %d (#%d–#%d)  step %s (%s), first %s", labelW-1, "Steps", ss.Count, first, last,
			h.Step, h.StepNote, analyze.FormatUs(ss.FirstStepUs))
		vals := make([]float64, len(r.Steps))
		for i, stp := range r.Steps {
			vals[i] = stp.WallUs
		}
		vals = downsample(vals, barW-32)
		// Few steps get wider bars, so the line reads at a glance.
		rep := min(max((barW-32)/max(len(vals), 1), 1), 4)
		// Slow steps stand out: more than 10 % over the steady-state
		// median is yellow, more than 50 % red.
		med := ss.SteadyWallUs
		var b strings.Builder
		for i, c := range sparks(vals) {
			c = strings.Repeat(c, rep)
			style := st.gpuLane
			switch {
			case med > 0 && vals[i] > 1.5*med:
				style = st.bad
			case med > 0 && vals[i] > 1.1*med:
				style = st.warn
			}
			b.WriteString(style.Render(c))
		}
		add(fit("Step times", labelW) + b.String() + cut(fmt.Sprintf("  min %s  max %s", us(ss.MinWallUs), us(ss.MaxWallUs)), max(w-labelW-len(vals)*rep, 0)))
	}
	return out
}

// categoryLines are the GPU time by kernel category: a stacked bar and its
// legend.
func categoryLines(r *analyze.Result, st *styles, w, labelW, barW int) []string {
	var out []string
	add := func(l string) { out = append(out, l) }
	if len(r.Categories) > 0 {
		parts := make([]part, 0, len(r.Categories))
		var names []string
		for _, c := range r.Categories {
			parts = append(parts, part{c.Category, c.TotalUs, st.category(c.Category)})
			names = append(names, st.category(c.Category).Render(fmt.Sprintf("%s %.0f%%", c.Category, c.Share*100)))
		}
		b := stackedBar(parts, barW, []string{"█", "▓", "▒", "░"})
		add(fit("GPU time", labelW) + b)
		add(cut(strings.Repeat(" ", labelW)+strings.Join(names, " · "), w))
	}
	return out
}

// legend names the parts of a bar with their times.
func legend(parts []part) string {
	var ls []string
	for _, p := range parts {
		ls = append(ls, p.style.Render(fmt.Sprintf("%s %s", p.label, us(p.us))))
	}
	return strings.Join(ls, " · ")
}

func (s *overviewScreen) title() string { return "Overview" }

func (s *overviewScreen) handle(m *Model, msg tea.KeyMsg) bool {
	if key.Matches(msg, m.keys.open) {
		if row, ok := s.findings.selected(); ok {
			m.showFinding(row)
		}
		return true
	}
	return tableKeys(s.findings, &m.keys, msg)
}

func (s *overviewScreen) scroll(d int) { s.findings.move(d) }

func (s *overviewScreen) render(w, h int, st *styles) []string {
	out := s.header(w-1, st)
	for i, l := range out {
		if l != "" {
			out[i] = " " + l
		}
	}
	if len(s.d.res.Findings) == 0 {
		for _, l := range wrap(fmt.Sprintf("No findings: none of the analyzers (%s) saw a problem.", strings.Join(s.d.res.Analyzers, ", ")), w-1) {
			out = append(out, " "+l)
		}
		return out
	}
	room := h - len(out) - 1
	if room < 2 {
		return out[:min(len(out), h)]
	}
	out = append(out, s.findings.render(w, room, st)...)
	for len(out) < h-1 {
		out = append(out, "")
	}
	return append(out, st.dim.Render(cut(" Enter: the finding's evidence and fix · 2 kernels · 3 ops · 4 findings · 5 timeline · ? keys", w)))
}

func (s *overviewScreen) hint() string {
	return "overview  " + s.findings.position() + " findings  Enter opens"
}

func (s *overviewScreen) setFilter(f string) bool {
	s.findings.setFilter(f)
	return true
}

func (s *overviewScreen) back() bool { return false }

func (s *overviewScreen) save() func() {
	f := s.findings.clone()
	return func() { restoreTable(s.findings, f) }
}

func (s *overviewScreen) selection(row bool) (string, bool) {
	return tableSelection(s.findings, row, nil)
}

// severityRank orders severities high first.
func severityRank(s string) int {
	switch s {
	case analyze.High:
		return 0
	case analyze.Medium:
		return 1
	}
	return 2
}

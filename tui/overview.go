package tui

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/tracelens/tracelens/analyze"
)

// overviewScreen is screen 1: the trace at a glance and the top findings.
type overviewScreen struct {
	d    *data
	view *textView
}

func newOverview(d *data) *overviewScreen {
	s := &overviewScreen{d: d}
	s.view = newTextView(func(w int) []string { return overviewLines(d, w) })
	return s
}

// sparks draws values as a sparkline, one character each.
func sparks(vals []float64) string {
	const ticks = "▁▂▃▄▅▆▇█"
	tr := []rune(ticks)
	lo, hi := 0.0, 0.0
	for i, v := range vals {
		if i == 0 || v < lo {
			lo = v
		}
		if i == 0 || v > hi {
			hi = v
		}
	}
	var b strings.Builder
	for _, v := range vals {
		i := len(tr) - 1
		if hi > lo {
			i = int((v - lo) / (hi - lo) * float64(len(tr)-1))
		}
		b.WriteRune(tr[i])
	}
	return b.String()
}

func overviewLines(d *data, w int) []string {
	r := d.res
	sm := &r.Summary
	var out []string
	add := func(format string, a ...any) { out = append(out, cut(fmt.Sprintf(format, a...), w)) }
	device := r.Device
	if device == "" {
		device = "unknown device"
	}
	if dev := d.t.Device(0); dev != nil && dev.NumSMs > 0 {
		device += fmt.Sprintf(" (%d SMs)", dev.NumSMs)
	}
	add("%s · %s (%s) · %s", d.name, sanitize(sm.Format), sanitize(sm.Framework), sanitize(device))
	add("")
	ss := &r.StepStats
	if sm.StepsSynthetic {
		add("Steps       none marked (no ProfilerStep#N): the whole trace is one step of %s", us(ss.MedianWallUs))
	} else {
		first, last := r.Steps[0].Number, r.Steps[len(r.Steps)-1].Number
		add("Steps       %d (#%d–#%d)  step %s (median after the first), first %s", ss.Count, first, last,
			analyze.FormatUs(ss.SteadyWallUs), analyze.FormatUs(ss.FirstStepUs))
		vals := make([]float64, len(r.Steps))
		lo, hi := r.Steps[0].WallUs, r.Steps[0].WallUs
		for i, st := range r.Steps {
			vals[i] = st.WallUs
			lo, hi = min(lo, st.WallUs), max(hi, st.WallUs)
		}
		if len(vals) > w-40 {
			vals = vals[:max(w-40, 1)]
		}
		add("Step times  %s  min %s  max %s", sparks(vals), us(lo), us(hi))
	}
	add("GPU         busy %s of the step; over the whole trace %s of %s wall", analyze.FormatShare(ss.SteadyGPUBusyShare),
		us(sm.GPUBusyUs), us(sm.WallUs))
	add("Per step    %s kernels, %s launches, GPU busy %s (medians after the first)", analyze.FormatCount(ss.SteadyKernels),
		analyze.FormatCount(ss.SteadyLaunches), analyze.FormatUs(ss.SteadyGPUBusyUs))
	add("Kernels     %d launches, %d distinct, %s; %d memcpy (%s), %d memset", sm.KernelLaunches, sm.DistinctKernels,
		us(sm.GPUKernelUs), sm.Memcpys, us(sm.MemcpyUs), sm.Memsets)
	if len(r.Categories) > 0 {
		var parts []string
		for _, c := range r.Categories {
			parts = append(parts, fmt.Sprintf("%s %.0f%%", c.Category, c.Share*100))
		}
		add("GPU time    %s", strings.Join(parts, " · "))
	}
	add("")
	if len(r.Findings) == 0 {
		return append(out, wrap(fmt.Sprintf("No findings: none of the analyzers (%s) saw a problem.", strings.Join(r.Analyzers, ", ")), w)...)
	}
	tw := max(w-30, 20)
	add("%s%12s %6s", fit("Top findings", tw+11), "saving/step", "share")
	for i, f := range r.Findings {
		if i == 3 {
			break
		}
		add(" %d. %-6s %s%12s %5.1f%%", i+1, f.Severity, fit(cut(sanitize(f.Title), tw), tw), us(f.SavingUs), f.Share*100)
	}
	if n := len(r.Findings) - 3; n > 0 {
		add("    … %d more on screen 4 (Findings)", n)
	}
	add("")
	add("2 kernels · 3 ops · 4 findings (Enter: evidence and fix) · 5 timeline · ? keys")
	return out
}

func (s *overviewScreen) title() string { return "Overview" }

func (s *overviewScreen) handle(m *Model, msg tea.KeyMsg) bool {
	return tableKeys(s.view, &m.keys, msg)
}

func (s *overviewScreen) scroll(d int) { s.view.scroll(d) }

func (s *overviewScreen) render(w, h int, st *styles) []string { return s.view.render(w, h, st) }

func (s *overviewScreen) hint() string { return "overview  " + s.view.position() }

func (s *overviewScreen) setFilter(string) bool { return false }

func (s *overviewScreen) back() bool { return false }

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

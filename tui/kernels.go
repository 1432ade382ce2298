package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/trace"
)

// kernelsScreen is screen 2: the ranked kernel table and, on Enter, one
// kernel's detail.
type kernelsScreen struct {
	d      *data
	tbl    *table
	detail *textView // nil when the table is shown
}

func newKernelsScreen(d *data) *kernelsScreen {
	ks := d.kernels
	n := len(ks)
	desc := func(f func(k *kernelRow) float64) []int32 {
		return orderBy(n, func(a, b int) int { return cmp.Compare(f(&ks[b]), f(&ks[a])) })
	}
	cols := []column{
		{title: "KERNEL", asc: true, order: orderBy(n, func(a, b int) int { return cmp.Compare(ks[a].short, ks[b].short) })},
		{title: "CATEGORY", width: 11, drop: 2, asc: true, order: orderBy(n, func(a, b int) int { return cmp.Compare(ks[a].Category, ks[b].Category) }),
			style: func(row int, st *styles) lipgloss.Style { return st.category(ks[row].Category) }},
		{title: "COUNT", width: 6, right: true, order: desc(func(k *kernelRow) float64 { return float64(k.Count) })},
		{title: "TOTAL", width: 7, right: true, order: desc(func(k *kernelRow) float64 { return k.TotalUs })},
		{title: "MEAN", width: 7, right: true, order: desc(func(k *kernelRow) float64 { return k.MeanUs })},
		{title: "MEDIAN", width: 7, right: true, drop: 5, order: desc(func(k *kernelRow) float64 { return k.MedianUs })},
		{title: "P95", width: 7, right: true, drop: 3, order: desc(func(k *kernelRow) float64 { return k.P95Us })},
		{title: "MIN", width: 7, right: true, drop: 6, order: desc(func(k *kernelRow) float64 { return k.MinUs })},
		{title: "MAX", width: 7, right: true, drop: 4, order: desc(func(k *kernelRow) float64 { return k.MaxUs })},
		{title: "SHARE", width: 6, right: true, order: desc(func(k *kernelRow) float64 { return k.Share })},
	}
	keys := make([]string, n)
	for i := range ks {
		keys[i] = ks[i].key
	}
	cell := func(row, col int) string {
		k := &ks[row]
		switch col {
		case 0:
			if k.Autotune {
				// Launched by torch.compile's autotuner, not by the model.
				return autotuneMark + k.short
			}
			return k.short
		case 1:
			return k.Category
		case 2:
			return itoa(k.Count)
		case 3:
			return us(k.TotalUs).String()
		case 4:
			return us(k.MeanUs).String()
		case 5:
			return us(k.MedianUs).String()
		case 6:
			return us(k.P95Us).String()
		case 7:
			return us(k.MinUs).String()
		case 8:
			return us(k.MaxUs).String()
		case 9:
			return fmt.Sprintf("%.1f%%", k.Share*100)
		}
		return ""
	}
	return &kernelsScreen{d: d, tbl: newTable(cols, keys, nil, 3, cell)}
}

func (s *kernelsScreen) title() string { return "Kernels" }

func (s *kernelsScreen) handle(m *Model, msg tea.KeyMsg) bool {
	if s.detail != nil {
		return tableKeys(s.detail, &m.keys, msg)
	}
	switch {
	case key.Matches(msg, m.keys.open):
		if row, ok := s.tbl.selected(); ok {
			s.open(row)
		}
		return true
	case key.Matches(msg, m.keys.sort):
		s.tbl.cycleSort()
		return true
	case key.Matches(msg, m.keys.reverse):
		return s.tbl.flipSort()
	}
	return tableKeys(s.tbl, &m.keys, msg)
}

func (s *kernelsScreen) save() func() {
	tbl, detail := s.tbl.clone(), s.detail
	var top int
	if detail != nil {
		top = detail.top
	}
	return func() {
		restoreTable(s.tbl, tbl)
		s.detail = detail
		if detail != nil {
			detail.top = top
		}
	}
}

// selection is the selected kernel's full name, or its row.
func (s *kernelsScreen) selection(row bool) (string, bool) {
	return tableSelection(s.tbl, row && s.detail == nil, func(r int) string { return s.d.kernels[r].full })
}

// sourceLine is the first Python line analyze found above the selected
// kernel's launches.
func (s *kernelsScreen) sourceLine() string {
	if r, ok := s.tbl.selected(); ok && len(s.d.kernels[r].Python) > 0 {
		return s.d.kernels[r].Python[0]
	}
	return ""
}

// open shows the detail of kernel row.
func (s *kernelsScreen) open(row int) {
	k := &s.d.kernels[row]
	s.detail = newTextView(func(w int) []string { return kernelDetail(s.d, k, w) })
}

// show selects kernel row and opens it (a link from another screen).
func (s *kernelsScreen) show(row int) {
	s.tbl.selectRow(row)
	s.open(row)
}

func (s *kernelsScreen) scroll(d int) {
	if s.detail != nil {
		s.detail.scroll(d)
		return
	}
	s.tbl.move(d)
}

func (s *kernelsScreen) render(w, h int, st *styles) []string {
	if s.detail != nil {
		return s.detail.render(w, h, st)
	}
	return s.tbl.render(w, h, st)
}

func (s *kernelsScreen) hint() string {
	if s.detail != nil {
		return "kernel detail  Esc back  " + s.detail.position()
	}
	return s.tbl.position() + " kernels  sort " + s.tbl.sortName() + "  Enter opens"
}

func (s *kernelsScreen) setFilter(f string) bool {
	if s.detail != nil {
		return false
	}
	s.tbl.setFilter(f)
	return true
}

func (s *kernelsScreen) back() bool {
	if s.detail == nil {
		return false
	}
	s.detail = nil
	return true
}

// scroller is what the movement keys act on: tables and text views.
type scroller interface {
	move(d int)
	home()
	end()
	// page is how far PgUp/PgDn move.
	page() int
}

// tableKeys applies the movement keys every list and text view shares.
func tableKeys(s scroller, km *keyMap, msg tea.KeyMsg) bool {
	switch {
	case key.Matches(msg, km.up):
		s.move(-1)
	case key.Matches(msg, km.down):
		s.move(1)
	case key.Matches(msg, km.pageUp):
		s.move(-s.page())
	case key.Matches(msg, km.pageDown):
		s.move(s.page())
	case key.Matches(msg, km.top):
		s.home()
	case key.Matches(msg, km.bottom):
		s.end()
	default:
		return false
	}
	return true
}

// autotuneMark prefixes the name of a kernel torch.compile's autotuner
// launched while benchmarking candidates: its time is compile cost, not
// the model's.
const autotuneMark = "[autotune] "

// kernelDetail is the text of one kernel's detail view at width w: its
// figures, duration histogram, launches per step, the op paths and Python
// lines that launch it, its launch configurations and its full name.
func kernelDetail(d *data, k *kernelRow, w int) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	out = append(out, wrap(k.short, w)...)
	add("category %s   launches %d   total %s   share %.1f%%", k.Category, k.Count, us(k.TotalUs), k.Share*100)
	add("mean %s   median %s   p95 %s   min %s   max %s", us(k.MeanUs), us(k.MedianUs), us(k.P95Us), us(k.MinUs), us(k.MaxUs))
	if k.Autotune {
		add("launched by torch.compile's autotuner while benchmarking candidates: compile cost, not the model's")
	}

	add("")
	add("Duration histogram")
	out = append(out, histogram(d.t, k.launches, w)...)
	out = append(out, kernelSteps(d, k)...)
	out = append(out, kernelCallers(d, k, w)...)
	if len(k.Python) > 0 {
		add("")
		add("Python lines")
		for _, p := range k.Python {
			add("  %s", cut(sanitize(p), w-2))
		}
	}

	out = append(out, launchConfigs(d.t, k)...)
	if k.full != k.short {
		// Last: a templated C++ name can fill a screen by itself.
		add("")
		add("Full name")
		for _, l := range wrap(k.full, w-2) {
			out = append(out, "  "+l)
		}
	}
	return out
}

// kernelSteps is the launches per step: analyze's per-step counts (by
// launch time), the same figures the report and diff quote.
func kernelSteps(d *data, k *kernelRow) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	add("")
	add("Launches per step")
	for i, st := range d.res.Steps {
		var c analyze.StepShare
		if i < len(k.PerStep) {
			c = k.PerStep[i]
		}
		label := fmt.Sprintf("step #%d", st.Number)
		if st.Synthetic {
			label = "whole trace"
		}
		add("  %-12s %6d launches  %8s", label, c.Count, analyze.FormatUs(c.Us))
	}
	if k.OutsideSteps > 0 {
		add("  %-12s %6d launches", "outside steps", k.OutsideSteps)
	}

	return out
}

// kernelCallers is the op paths (innermost last) that launch the
// kernel, the 8 commonest, wrapped to width w.
func kernelCallers(d *data, k *kernelRow, w int) []string {
	t := d.t
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	add("")
	add("Launched by (op path, innermost last)")
	paths := map[string]int{}
	noOp := 0
	v := d.res.View()
	for _, g := range k.launches {
		op := v.Op(int(g))
		if op == trace.None {
			noOp++
			continue
		}
		var names []string
		for _, o := range t.OpPath(op) {
			names = append(names, sanitize(t.Ops[o].Name))
		}
		paths[strings.Join(names, " › ")]++
	}
	for _, p := range ranked(paths, 8) {
		for i, l := range wrap(p.name, w-10) {
			if i == 0 {
				add("  %5d× %s", p.n, l)
			} else {
				add("         %s", l)
			}
		}
	}
	if noOp > 0 {
		add("  %5d× (no enclosing op in the trace)", noOp)
	}
	return out
}

// launchConfigs is the kernel's launch configurations (grid, block,
// registers, shared memory, occupancy), the 6 commonest.
func launchConfigs(t *trace.Trace, k *kernelRow) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	add("")
	add("Launch configuration")
	type config struct {
		grid, block [3]int32
		regs, smem  int32
		occ         float32
	}
	configs := map[config]int{}
	for _, g := range k.launches {
		a := &t.GPU[g]
		configs[config{a.Grid, a.Block, a.Registers, a.SharedMem, a.Occupancy}]++
	}
	type configCount struct {
		c config
		n int
	}
	var cs []configCount
	for c, n := range configs {
		cs = append(cs, configCount{c, n})
	}
	slices.SortFunc(cs, func(a, b configCount) int {
		if c := cmp.Compare(b.n, a.n); c != 0 {
			return c
		}
		return cmp.Compare(fmt.Sprint(a.c), fmt.Sprint(b.c))
	})
	for i, c := range cs {
		if i == 6 {
			add("  … %d more configurations", len(cs)-i)
			break
		}
		// Kineto writes occupancy 0 for cluster launches (and -1 when it
		// has none): neither is a measured 0 %.
		occ := "—"
		if c.c.occ > 0 {
			occ = fmt.Sprintf("%.0f%%", c.c.occ)
		}
		add("  %5d× grid %s block %s  %d regs  %d B shared  occupancy %s", c.n, dim3(c.c.grid), dim3(c.c.block), c.c.regs, c.c.smem, occ)
	}
	return out
}

func dim3(v [3]int32) string { return fmt.Sprintf("(%d,%d,%d)", v[0], v[1], v[2]) }

type nameCount struct {
	name string
	n    int
}

// ranked returns the n most frequent names, most first.
func ranked(m map[string]int, n int) []nameCount {
	out := make([]nameCount, 0, len(m))
	for k, v := range m {
		out = append(out, nameCount{k, v})
	}
	slices.SortFunc(out, func(a, b nameCount) int {
		if c := cmp.Compare(b.n, a.n); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// histogram draws launch durations in up to 10 equal-width buckets.
func histogram(t *trace.Trace, launches []trace.Index, w int) []string {
	if len(launches) == 0 {
		return []string{"  no launches"}
	}
	lo, hi := t.GPU[launches[0]].Dur(), t.GPU[launches[0]].Dur()
	for _, g := range launches {
		d := t.GPU[g].Dur()
		lo, hi = min(lo, d), max(hi, d)
	}
	buckets := 10
	if hi == lo {
		buckets = 1
	}
	counts := make([]int, buckets)
	step := (hi - lo) / trace.Duration(buckets)
	for _, g := range launches {
		b := buckets - 1
		if step > 0 {
			b = min(int((t.GPU[g].Dur()-lo)/step), buckets-1)
		}
		counts[b]++
	}
	most := slices.Max(counts)
	barW := max(w-32, 10)
	var out []string
	for i, c := range counts {
		from := lo + trace.Duration(i)*step
		to := from + step
		if i == buckets-1 {
			to = hi
		}
		n := (c*barW + most - 1) / most
		out = append(out, strings.TrimRight(fmt.Sprintf("  %8s–%-8s %5d %s", from, to, c, strings.Repeat("█", n)), " "))
	}
	return out
}

package tui

import (
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/diff"
)

// diffScreen is screen 6: BASE against NEW, per-step summary metrics and
// the kernel (or category, with c) table, each change marked by whether the
// Mann–Whitney U test calls it significant.
type diffScreen struct {
	d       *data
	r       *diff.Result
	kernels *table
	cats    *table
	byCat   bool
}

func newDiffScreen(d *data) *diffScreen {
	s := &diffScreen{d: d, r: d.diff}
	if s.r == nil {
		return s
	}
	s.kernels = diffTable(s.r.Kernels, "KERNEL", true)
	s.cats = diffTable(s.r.Categories, "CATEGORY", false)
	// Kernel names are not comparable across frameworks: start where the
	// comparison means something.
	s.byCat = s.r.CrossFramework
	return s
}

// Significance marks of a change. Every figure the diff compares (step
// wall, GPU busy and idle, launches, API and op time, a kernel's time per
// step) is better lower, so up is worse.
const (
	markWorse   = "▲" // significantly slower (or more)
	markBetter  = "▼" // significantly faster (or fewer)
	markNoise   = "~" // within the noise, or untestable
	markAdded   = "+"
	markRemoved = "−"
)

// mark is the significance marker of a change.
func mark(st diff.Status, d *diff.Delta) string {
	switch st {
	case diff.Added:
		return markAdded
	case diff.Removed:
		return markRemoved
	}
	switch {
	case !d.Significant:
		return markNoise
	case d.New.Median > d.Base.Median:
		return markWorse
	default:
		return markBetter
	}
}

// pct and pval print a change and its p-value with diff's formatters, so
// the terminal UI reads "−31%  0.029" where `tracelens diff` prints
// "−31% (p=0.029 …)".
func pct(v float64) string { return diff.FormatPct(v) }

func pval(p float64) string { return diff.FormatP(p) }

func diffTable(rows []diff.Row, what string, short bool) *table {
	n := len(rows)
	names := make([]string, n)
	keys := make([]string, n)
	for i := range rows {
		name := rows[i].Name
		if short {
			name = analyze.ShortKernelName(name)
		}
		names[i] = sanitize(name)
		keys[i] = strings.ToLower(names[i] + "\x00" + sanitize(rows[i].Name))
	}
	change := func(r *diff.Row) float64 { return math.Abs(r.New.Median - r.Base.Median) }
	changeStyle := func(row int, st *styles) lipgloss.Style { return st.change(mark(rows[row].Status, &rows[row].Delta)) }
	cols := []column{
		{title: "", width: 1, style: changeStyle},
		{title: what, asc: true, order: orderBy(n, func(a, b int) int { return cmp.Compare(names[a], names[b]) })},
		{title: "STATUS", width: 7, drop: 2, asc: true, order: orderBy(n, func(a, b int) int { return cmp.Compare(rows[a].Status, rows[b].Status) })},
		{title: "BASE/STEP", width: 10, right: true, order: orderBy(n, func(a, b int) int { return cmp.Compare(rows[b].Base.Median, rows[a].Base.Median) })},
		{title: "NEW/STEP", width: 9, right: true, order: orderBy(n, func(a, b int) int { return cmp.Compare(rows[b].New.Median, rows[a].New.Median) })},
		{title: "CHANGE", width: 9, right: true, style: changeStyle, order: orderBy(n, func(a, b int) int { return cmp.Compare(change(&rows[b]), change(&rows[a])) })},
		{title: "DELTA", width: 8, right: true, style: changeStyle, order: orderBy(n, func(a, b int) int {
			return cmp.Compare(math.Abs(nanTo(rows[b].Pct)), math.Abs(nanTo(rows[a].Pct)))
		})},
		{title: "P", width: 5, right: true, drop: 1, asc: true, order: orderBy(n, func(a, b int) int { return cmp.Compare(rows[a].P, rows[b].P) })},
	}
	cell := func(row, col int) string {
		r := &rows[row]
		switch col {
		case 0:
			return mark(r.Status, &r.Delta)
		case 1:
			return names[row]
		case 2:
			return string(r.Status)
		case 3:
			return diff.FormatTime(r.Base.Median)
		case 4:
			return diff.FormatTime(r.New.Median)
		case 5:
			// Signed as diff.FormatPct signs: "+225 ns", "−64 ns".
			d := r.New.Median - r.Base.Median
			if d > 0 {
				return "+" + diff.FormatTime(d)
			}
			if d < 0 {
				return "−" + diff.FormatTime(-d)
			}
			return diff.FormatTime(0)
		case 6:
			return pct(r.Pct)
		case 7:
			return pval(r.P)
		}
		return ""
	}
	return newTable(cols, keys, nil, 5, cell)
}

// nanTo makes NaN (a kernel only NEW has) sort as the largest change.
func nanTo(v float64) float64 {
	if math.IsNaN(v) {
		return math.Inf(1)
	}
	return v
}

func (s *diffScreen) title() string { return "Diff" }

func (s *diffScreen) cur() *table {
	if s.byCat {
		return s.cats
	}
	return s.kernels
}

func (s *diffScreen) handle(m *Model, msg tea.KeyMsg) bool {
	if s.r == nil {
		return false
	}
	switch {
	case key.Matches(msg, m.keys.diffView):
		s.byCat = !s.byCat
		return true
	case key.Matches(msg, m.keys.sort):
		s.cur().cycleSort()
		return true
	case key.Matches(msg, m.keys.reverse):
		return s.cur().flipSort()
	case key.Matches(msg, m.keys.open):
		s.open(m)
		return true
	}
	return tableKeys(s.cur(), &m.keys, msg)
}

// open follows the row under the cursor into NEW: a kernel to its
// detail, a category to the kernel table filtered on it. A kernel only
// BASE ran has nothing to open.
func (s *diffScreen) open(m *Model) {
	row, ok := s.cur().selected()
	if !ok {
		return
	}
	if s.byCat {
		cat := sanitize(s.r.Categories[row].Name)
		m.follow(func() {
			m.filters[scrKernels] = cat
			ks := m.screens[scrKernels].(*kernelsScreen)
			ks.back()
			ks.tbl.setFilter(cat)
			m.goTo(scrKernels)
		})
		return
	}
	r := &s.r.Kernels[row]
	for _, name := range append([]string{r.Name}, r.NewNames...) {
		if k, ok := s.d.kernelIndex[name]; ok {
			m.showKernel(k)
			return
		}
	}
}

func (s *diffScreen) scroll(d int) {
	if s.r != nil {
		s.cur().move(d)
	}
}

func side(sd *diff.Side) string {
	steps := fmt.Sprintf("%d steps, %d compared", sd.Steps, sd.Samples)
	if sd.StepsSynthetic {
		steps = "no step markers"
	}
	return fmt.Sprintf("%s (%s, %s)", sanitize(filepath.Base(sd.Source)), sanitize(sd.Framework), steps)
}

func (s *diffScreen) render(w, h int, st *styles) []string {
	if s.r == nil {
		return []string{"", cut("  One trace is open. To compare two, run: tracelens tui BASE NEW", w)}
	}
	r := s.r
	// The names' column is as wide as the longest name ("step period
	// untraced (est.)"), or that row's figures sit under the wrong
	// headers.
	nameW := 16
	for i := range r.Summary {
		nameW = max(nameW, lipgloss.Width(r.Summary[i].Name))
	}
	out := []string{
		cut(" BASE "+side(&r.Base), w),
		cut(" NEW  "+side(&r.New), w),
		st.header.Render(cut(fmt.Sprintf("   %-*s %14s %14s %8s %5s", nameW, "PER STEP", "BASE", "NEW", "DELTA", "P"), w)),
	}
	for i := range r.Summary {
		m := &r.Summary[i]
		mk := mark(diff.Changed, &m.Delta)
		line := cut(fmt.Sprintf(" %s %-*s %14s %14s %8s %5s", mk, nameW, m.Name,
			diff.FormatSummary(m.Base, m.Time), diff.FormatSummary(m.New, m.Time), pct(m.Pct), pval(m.P)), w)
		if mk != markNoise {
			line = st.change(mk).Render(line)
		}
		out = append(out, line)
	}
	resolved, added := findingChanges("resolved", r.Findings.Resolved), findingChanges("new", r.Findings.New)
	if len(r.Findings.Resolved) > 0 {
		resolved = st.good.Render(resolved)
	}
	if len(r.Findings.New) > 0 {
		added = st.bad.Render(added)
	}
	persisting := fmt.Sprintf(" · %d persisting", len(r.Findings.Persisting))
	if n := countReduced(r.Findings.Persisting); n > 0 {
		persisting += fmt.Sprintf(" (%d reduced to half or less)", n)
	}
	out = append(out, cut(" findings  "+resolved+" · "+added+persisting, w))
	notes := r.Notes
	if len(notes) > 2 {
		notes = notes[:2]
	}
	room := h - len(out) - len(notes)
	if room > 2 {
		out = append(out, s.cur().render(w, room, st)...)
	}
	for _, n := range notes {
		out = append(out, st.dim.Render(cut(" note: "+sanitize(n), w)))
	}
	return out
}

// findingChanges lists finding ids with their saving per step (a one-time
// cost with its cost).
func findingChanges(label string, fs []diff.FindingChange) string {
	if len(fs) == 0 {
		return label + ": none"
	}
	parts := make([]string, len(fs))
	for i, f := range fs {
		if f.OneOff {
			// A one-time cost saves nothing per step.
			parts[i] = fmt.Sprintf("%s (one-time %s)", sanitize(f.ID), us(max(f.BaseOneOffUs, f.NewOneOffUs)))
			continue
		}
		parts[i] = fmt.Sprintf("%s (%s/step)", sanitize(f.ID), us(max(f.BaseSavingUs, f.NewSavingUs)))
	}
	return label + ": " + strings.Join(parts, ", ")
}

func (s *diffScreen) hint() string {
	if s.r == nil {
		return "diff"
	}
	what := "kernels"
	if s.byCat {
		what = "categories"
	}
	return s.cur().position() + " " + what + "  sort " + s.cur().sortName() + "  c " + map[bool]string{true: "kernels", false: "categories"}[s.byCat] + "  Enter opens  ▲▼ significant ~ noise"
}

func (s *diffScreen) setFilter(f string) bool {
	if s.r == nil {
		return false
	}
	s.kernels.setFilter(f)
	s.cats.setFilter(f)
	return true
}

func (s *diffScreen) back() bool { return false }

func (s *diffScreen) save() func() {
	if s.r == nil {
		return func() {}
	}
	kernels, cats, byCat := s.kernels.clone(), s.cats.clone(), s.byCat
	return func() {
		restoreTable(s.kernels, kernels)
		restoreTable(s.cats, cats)
		s.byCat = byCat
	}
}

// selection is the selected kernel's or category's name, or its row.
func (s *diffScreen) selection(row bool) (string, bool) {
	if s.r == nil {
		return "", false
	}
	return tableSelection(s.cur(), row, nil)
}

// countReduced is how many persisting findings the fix cut to half or
// less (diff.FindingChange.Reduced).
func countReduced(fs []diff.FindingChange) int {
	n := 0
	for _, f := range fs {
		if f.Reduced {
			n++
		}
	}
	return n
}

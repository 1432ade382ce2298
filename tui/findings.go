package tui

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/tracelens/tracelens/analyze"
)

// findingsScreen is screen 4: findings ranked by saving; Enter shows the
// evidence and the fix, and the kernels the evidence names link to
// screen 2.
type findingsScreen struct {
	d      *data
	tbl    *table
	detail *table // one row per line of the open finding
	links  []int  // per detail line: kernel row it names, or -1
	lines  []string
	open   int
	w      int // width the detail was built for
	lastW  int // width of the last render
}

func newFindingsScreen(d *data) *findingsScreen {
	fs := d.res.Findings
	n := len(fs)
	keys := make([]string, n)
	titles := make([]string, n)
	for i := range fs {
		titles[i] = sanitize(fs[i].Title)
		keys[i] = strings.ToLower(titles[i] + " " + fs[i].ID)
	}
	saving := orderBy(n, func(a, b int) int { return cmp.Compare(fs[b].SavingUs, fs[a].SavingUs) })
	cols := []column{
		{title: "#", width: 3, right: true, order: saving},
		{title: "FINDING", prose: true, order: orderBy(n, func(a, b int) int { return cmp.Compare(titles[a], titles[b]) })},
		{title: "SEVERITY", width: 9, order: orderBy(n, func(a, b int) int { return cmp.Compare(severityRank(fs[a].Severity), severityRank(fs[b].Severity)) })},
		{title: "SAVING/STEP", width: 12, right: true, order: saving},
		{title: "SHARE", width: 6, right: true, drop: 1, order: orderBy(n, func(a, b int) int { return cmp.Compare(fs[b].Share, fs[a].Share) })},
		{title: "ANALYZER", width: 16, drop: 2, order: orderBy(n, func(a, b int) int { return cmp.Compare(fs[a].ID, fs[b].ID) })},
	}
	cell := func(row, col int) string {
		f := &fs[row]
		switch col {
		case 0:
			return itoa(row + 1)
		case 1:
			return titles[row]
		case 2:
			return f.Severity
		case 3:
			return us(f.SavingUs).String()
		case 4:
			return fmt.Sprintf("%.1f%%", f.Share*100)
		case 5:
			return sanitize(f.ID)
		}
		return ""
	}
	return &findingsScreen{d: d, tbl: newTable(cols, keys, nil, 3, cell), open: -1}
}

func (s *findingsScreen) title() string { return "Findings" }

func (s *findingsScreen) handle(m *Model, msg tea.KeyMsg) bool {
	if s.detail != nil {
		if key.Matches(msg, m.keys.open) {
			if i, ok := s.detail.selected(); ok && s.links[i] >= 0 {
				ks := m.screens[scrKernels].(*kernelsScreen)
				m.filters[scrKernels] = ""
				ks.tbl.setFilter("")
				ks.show(s.links[i])
				m.goTo(scrKernels)
			}
			return true
		}
		return tableKeys(s.detail, &m.keys, msg)
	}
	switch {
	case key.Matches(msg, m.keys.open):
		if row, ok := s.tbl.selected(); ok {
			s.open = row
			s.build(max(s.lastW-2, 20))
		}
		return true
	case key.Matches(msg, m.keys.sort):
		s.tbl.cycleSort()
		return true
	}
	return tableKeys(s.tbl, &m.keys, msg)
}

// build lays the open finding out for width w: text wraps, evidence
// tables keep their columns, and each kernel the evidence names gets a
// line of its own that Enter follows.
func (s *findingsScreen) build(w int) {
	f := &s.d.res.Findings[s.open]
	s.lines, s.links = s.lines[:0], s.links[:0]
	add := func(l string, link int) {
		s.lines = append(s.lines, l)
		s.links = append(s.links, link)
	}
	for _, l := range wrap(fmt.Sprintf("severity %s · confidence %s · saves %s per step (%.1f%% of a step) · %s",
		f.Severity, f.Confidence, us(f.SavingUs), f.Share*100, sanitize(f.ID)), w) {
		add(l, -1)
	}
	add("", -1)
	add("Evidence", -1)
	for _, e := range f.Evidence {
		if e.Text != "" {
			for _, l := range wrap(sanitize(e.Text), w-2) {
				add("  "+l, -1)
			}
		}
		if e.Table != nil {
			for _, l := range evidenceTable(e.Table, w-4) {
				add("    "+l, -1)
			}
		}
		for _, k := range e.Kernels {
			row, ok := s.d.kernelIndex[k]
			if !ok {
				add("    kernel "+sanitize(analyze.ShortKernelName(k)), -1)
				continue
			}
			add("  → kernel "+s.d.kernels[row].short+"  (Enter opens it)", row)
		}
	}
	add("", -1)
	add("Fix", -1)
	for _, l := range wrap(sanitize(f.Fix), w-2) {
		add("  "+l, -1)
	}
	keys := make([]string, len(s.lines))
	cols := []column{{title: sanitize(f.Title), prose: true}}
	lines := s.lines
	s.detail = newTable(cols, keys, orderBy(len(lines), func(a, b int) int { return 0 }), -1, func(row, col int) string { return lines[row] })
	// Start on the first link: it is what the user most likely wants.
	for i, l := range s.links {
		if l >= 0 {
			s.detail.selectRow(i)
			break
		}
	}
	s.w = w
}

// evidenceTable renders a small table with columns as wide as their
// widest cell, figures right-aligned.
func evidenceTable(t *analyze.Table, w int) []string {
	header := make([]string, len(t.Columns))
	widths := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		header[i] = c.Name
		widths[i] = width(sanitize(c.Name))
	}
	rows := make([][]string, len(t.Rows))
	for i, r := range t.Rows {
		rows[i] = make([]string, len(r))
		for j, v := range r {
			rows[i][j] = v.String()
		}
	}
	for _, r := range rows {
		for i, c := range r {
			if i < len(widths) {
				widths[i] = max(widths[i], width(sanitize(c)))
			}
		}
	}
	// Shrink the widest column until the table fits: long kernel names
	// give up their middle, the figures stay whole.
	for total := len(widths)*2 - 2; ; total = len(widths)*2 - 2 {
		widest := 0
		for i, cw := range widths {
			total += cw
			if cw > widths[widest] {
				widest = i
			}
		}
		if total <= w || widths[widest] <= 8 {
			break
		}
		widths[widest] -= min(total-w, widths[widest]-8)
	}
	line := func(cells []string) string {
		var b strings.Builder
		for i, c := range cells {
			if i >= len(widths) {
				break
			}
			c = fit(sanitize(c), widths[i])
			if t.Columns[i].Kind.Numeric() {
				c = padLeft(strings.TrimRight(c, " "), widths[i])
			}
			b.WriteString(c)
			b.WriteString("  ")
		}
		return cut(strings.TrimRight(b.String(), " "), w)
	}
	out := []string{line(header)}
	for _, r := range rows {
		out = append(out, line(r))
	}
	return out
}

func (s *findingsScreen) scroll(d int) {
	if s.detail != nil {
		s.detail.move(d)
		return
	}
	s.tbl.move(d)
}

func (s *findingsScreen) render(w, h int, st *styles) []string {
	s.lastW = w
	if len(s.d.res.Findings) == 0 {
		return []string{"", cut(fmt.Sprintf("  No findings: the analyzers (%s) saw no problem in this trace.", strings.Join(s.d.res.Analyzers, ", ")), w)}
	}
	if s.open >= 0 {
		if s.w != w-2 {
			s.build(w - 2)
		}
		return s.detail.render(w, h, st)
	}
	return s.tbl.render(w, h, st)
}

func (s *findingsScreen) hint() string {
	if s.detail != nil {
		return "finding " + s.detail.position() + "  Enter on → follows a kernel  Esc back"
	}
	return s.tbl.position() + " findings  sort " + s.tbl.sortName() + "  Enter opens"
}

func (s *findingsScreen) setFilter(f string) bool {
	if s.detail != nil {
		return false
	}
	s.tbl.setFilter(f)
	return true
}

func (s *findingsScreen) back() bool {
	if s.open < 0 {
		return false
	}
	s.open, s.detail = -1, nil
	return true
}

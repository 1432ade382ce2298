package tui

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/findingtext"
)

// findingsScreen is screen 4: findings ranked by saving; Enter shows the
// evidence and the fix, and the kernels the evidence names link to
// screen 2.
type findingsScreen struct {
	d      *data
	tbl    *table
	detail *table // one row per line of the open finding
	lines  detailLines
	open   int
	w      int // width the detail was built for
	lastW  int // width of the last render
}

func newFindingsScreen(d *data) *findingsScreen {
	fs := d.res.Findings
	n := len(fs)
	titles := make([]string, n)
	for i := range fs {
		titles[i] = sanitize(fs[i].Title)
	}
	saving := orderBy(n, func(a, b int) int { return cmp.Compare(fs[b].SavingUs, fs[a].SavingUs) })
	cols := []column{
		{title: "#", width: 3, right: true, order: saving},
		{title: "FINDING", prose: true, asc: true, order: orderBy(n, func(a, b int) int { return cmp.Compare(titles[a], titles[b]) })},
		{title: "SEVERITY", width: 9, order: orderBy(n, func(a, b int) int { return cmp.Compare(severityRank(fs[a].Severity), severityRank(fs[b].Severity)) }),
			style: func(row int, st *styles) lipgloss.Style { return st.severity(fs[row].Severity) }},
		{title: "SAVING/STEP", width: 12, right: true, order: saving},
		{title: "SHARE", width: 6, right: true, drop: 1, order: orderBy(n, func(a, b int) int { return cmp.Compare(fs[b].Share, fs[a].Share) })},
		{title: "ANALYZER", width: 16, drop: 2, asc: true, order: orderBy(n, func(a, b int) int { return cmp.Compare(fs[a].ID, fs[b].ID) })},
	}
	fields := []findingField{fieldRank, fieldTitle, fieldSeverity, fieldSaving, fieldShare, fieldAnalyzer}
	cell := func(row, col int) string { return findingText(fs, titles, row, fields[col]) }
	return &findingsScreen{d: d, tbl: newTable(cols, nil, nil, 3, cell), open: -1}
}

// findingField is a column of a findings table (screen 4, the overview).
type findingField uint8

const (
	fieldRank findingField = iota
	fieldTitle
	fieldSeverity
	fieldSaving
	fieldShare
	fieldAnalyzer
)

// findingText is the text of one field of finding row; titles are the
// sanitised titles.
func findingText(fs []analyze.Finding, titles []string, row int, field findingField) string {
	f := &fs[row]
	switch field {
	case fieldRank:
		return itoa(row + 1)
	case fieldTitle:
		return titles[row]
	case fieldSeverity:
		return f.Severity
	case fieldSaving:
		if f.NoTimeCost() {
			return "memory"
		}
		if f.SavingFrom == analyze.FromOneOff {
			return "once " + us(f.OneOffUs).String()
		}
		return us(f.SavingUs).String()
	case fieldShare:
		return fmt.Sprintf("%.1f%%", f.Share*100)
	case fieldAnalyzer:
		return sanitize(f.ID)
	}
	return ""
}

func (s *findingsScreen) title() string { return "Findings" }

func (s *findingsScreen) handle(m *Model, msg tea.KeyMsg) bool {
	if s.detail != nil {
		if key.Matches(msg, m.keys.open) {
			if i, ok := s.lines.selected(s.detail); ok {
				s.lines.links[i].follow(m)
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
	case key.Matches(msg, m.keys.reverse):
		return s.tbl.flipSort()
	}
	return tableKeys(s.tbl, &m.keys, msg)
}

// build lays the open finding out for width w (findingLines).
func (s *findingsScreen) build(w int) {
	f := &s.d.res.Findings[s.open]
	s.lines = findingLines(s.d, f, nil, w)
	s.detail = s.lines.table(fmt.Sprintf("FINDING %d OF %d", s.open+1, len(s.d.res.Findings)),
		func(st *styles) lipgloss.Style { return st.severity(f.Severity) })
	s.w = w
}

// findingLines lays finding f out for width w: the title and text wrap,
// evidence tables keep their columns, and each kernel, chain or gap the
// evidence names gets a line of its own that Enter follows (to the
// kernel's detail in d, or to the timeline at that place). ranks, when
// set, are the ranks a run's finding concerns.
func findingLines(d *data, f *analyze.Finding, ranks []int, w int) detailLines {
	var l detailLines
	for _, t := range wrap(findingtext.Title(f), w) {
		l.add(t, lineTitle, noLink)
	}
	// The saving worded as the CLI's findings word it (findingtext).
	meta := fmt.Sprintf("severity %s · confidence %s · %s · %s", f.Severity, f.Confidence, findingtext.Saving(d.res, f), sanitize(f.ID))
	if len(ranks) > 0 {
		meta += " · ranks " + strings.Trim(fmt.Sprint(ranks), "[]")
	}
	for _, t := range wrap(meta, w) {
		l.add(t, lineMeta, noLink)
	}
	l.add("", lineText, noLink)
	l.add("Evidence", lineSection, noLink)
	for i := range f.Evidence {
		evidenceLines(&l, d, &f.Evidence[i], w)
	}
	l.add("", lineText, noLink)
	l.add("Fix", lineSection, noLink)
	for _, t := range wrap(findingtext.Fix(f), w-2) {
		l.add("  "+t, lineText, noLink)
	}
	return l
}

// evidenceLines adds one piece of evidence: its text, its table (a row
// that points at a place links to it) and its kernels.
func evidenceLines(l *detailLines, d *data, e *analyze.Evidence, w int) {
	if e.Text != "" {
		for _, t := range wrap(sanitize(e.Text), w-2) {
			l.add("  "+t, lineText, noLink)
		}
	}
	if e.Table != nil {
		for i, t := range evidenceTable(e.Table, w-4) {
			// Line 0 is the header; row i-1 may point at a place (a
			// gap): analyze says where.
			if p, ok := e.RowPlace(i - 1); i > 0 && ok {
				l.add("  → "+t, lineLink, placeLink(p))
				continue
			}
			l.add("    "+t, lineText, noLink)
		}
	}
	if p, ok := e.Place(); ok {
		l.add(fmt.Sprintf("  → timeline: the first time these %d kernels run back to back", len(e.Kernels)), lineLink, placeLink(p))
	}
	for _, k := range e.Kernels {
		row, ok := d.kernelIndex[k]
		if !ok {
			l.add("    kernel "+sanitize(analyze.ShortKernelName(k)), lineText, noLink)
			continue
		}
		l.add("  → kernel "+d.kernels[row].short, lineLink, kernelLink(row))
	}
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
			cursor := -1
			if s.detail != nil {
				cursor = s.detail.cursor
			}
			s.build(w - 2)
			if cursor >= 0 {
				s.detail.cursor = cursor
			}
		}
		return s.detail.render(w, h, st)
	}
	return s.tbl.render(w, h, st)
}

func (s *findingsScreen) hint() string {
	if s.detail != nil {
		return fmt.Sprintf("finding %d/%d  line %s  Enter on → follows  Esc back", s.open+1, len(s.d.res.Findings), s.detail.position())
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

func (s *findingsScreen) save() func() {
	saved := *s
	saved.tbl, saved.detail = s.tbl.clone(), s.detail.clone()
	return func() {
		tbl := s.tbl
		*s = saved
		restoreTable(tbl, saved.tbl)
		s.tbl = tbl
	}
}

// selection is the selected finding's title or row; in its detail, the
// line under the cursor (a kernel's full name on a kernel's line).
func (s *findingsScreen) selection(row bool) (string, bool) {
	if s.detail != nil {
		return s.lines.selection(s.d, s.detail, row)
	}
	return tableSelection(s.tbl, row, nil)
}

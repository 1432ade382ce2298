package tui

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/tracelens/tracelens/analyze"
)

// findingsScreen is screen 4: findings ranked by saving; Enter shows the
// evidence and the fix, and the kernels the evidence names link to
// screen 2.
type findingsScreen struct {
	d      *data
	tbl    *table
	detail *table // one row per line of the open finding
	links  []link // per detail line: where Enter leads
	kinds  []lineKind
	lines  []string
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
		{title: "FINDING", prose: true, order: orderBy(n, func(a, b int) int { return cmp.Compare(titles[a], titles[b]) })},
		{title: "SEVERITY", width: 9, order: orderBy(n, func(a, b int) int { return cmp.Compare(severityRank(fs[a].Severity), severityRank(fs[b].Severity)) }),
			style: func(row int, st *styles) lipgloss.Style { return st.severity(fs[row].Severity) }},
		{title: "SAVING/STEP", width: 12, right: true, order: saving},
		{title: "SHARE", width: 6, right: true, drop: 1, order: orderBy(n, func(a, b int) int { return cmp.Compare(fs[b].Share, fs[a].Share) })},
		{title: "ANALYZER", width: 16, drop: 2, order: orderBy(n, func(a, b int) int { return cmp.Compare(fs[a].ID, fs[b].ID) })},
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
			if i, ok := s.detail.selected(); ok {
				s.links[i].follow(m)
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

// lineKind is how a line of a finding's detail is drawn.
type lineKind uint8

const (
	lineText lineKind = iota
	lineTitle
	lineMeta // severity, confidence, saving
	lineSection
	lineLink
)

// build lays the open finding out for width w: the title and text wrap,
// evidence tables keep their columns, and each kernel, chain or gap the
// evidence names gets a line of its own that Enter follows (to the
// kernel's detail, or to the timeline at that place).
func (s *findingsScreen) build(w int) {
	f := &s.d.res.Findings[s.open]
	s.lines, s.links, s.kinds = s.lines[:0], s.links[:0], s.kinds[:0]
	add := func(l string, kind lineKind, to link) {
		s.lines = append(s.lines, l)
		s.kinds = append(s.kinds, kind)
		s.links = append(s.links, to)
	}
	for _, l := range wrap(sanitize(f.Title), w) {
		add(l, lineTitle, noLink)
	}
	meta := fmt.Sprintf("severity %s · confidence %s · saves %s per step (%.1f%% of a step) · %s",
		f.Severity, f.Confidence, us(f.SavingUs), f.Share*100, sanitize(f.ID))
	if f.SavingFrom == analyze.FromOneOff {
		meta = fmt.Sprintf("severity %s · confidence %s · one-time cost %s (paid once per process, not per step) · %s",
			f.Severity, f.Confidence, us(f.OneOffUs), sanitize(f.ID))
	}
	if f.NoTimeCost() {
		meta = fmt.Sprintf("severity %s · confidence %s · no time saving: the cost is device memory · %s", f.Severity, f.Confidence, sanitize(f.ID))
	}
	for _, l := range wrap(meta, w) {
		add(l, lineMeta, noLink)
	}
	add("", lineText, noLink)
	add("Evidence", lineSection, noLink)
	for _, e := range f.Evidence {
		if e.Text != "" {
			for _, l := range wrap(sanitize(e.Text), w-2) {
				add("  "+l, lineText, noLink)
			}
		}
		if e.Table != nil {
			for i, l := range evidenceTable(e.Table, w-4) {
				// Line 0 is the header; row i-1 may point at a place
				// (a gap): analyze says where.
				if p, ok := e.RowPlace(i - 1); i > 0 && ok {
					add("  → "+l, lineLink, placeLink(p))
					continue
				}
				add("    "+l, lineText, noLink)
			}
		}
		if p, ok := e.Place(); ok {
			add(fmt.Sprintf("  → timeline: the first time these %d kernels run back to back", len(e.Kernels)), lineLink, placeLink(p))
		}
		for _, k := range e.Kernels {
			row, ok := s.d.kernelIndex[k]
			if !ok {
				add("    kernel "+sanitize(analyze.ShortKernelName(k)), lineText, noLink)
				continue
			}
			add("  → kernel "+s.d.kernels[row].short, lineLink, kernelLink(row))
		}
	}
	add("", lineText, noLink)
	add("Fix", lineSection, noLink)
	for _, l := range wrap(sanitize(f.Fix), w-2) {
		add("  "+l, lineText, noLink)
	}
	lines, kinds := s.lines, s.kinds
	style := func(row int, st *styles) lipgloss.Style {
		switch kinds[row] {
		case lineTitle:
			return st.header
		case lineMeta:
			return st.severity(f.Severity)
		case lineSection:
			return st.title
		case lineLink:
			return st.link
		}
		return st.plain
	}
	cols := []column{{title: fmt.Sprintf("FINDING %d OF %d", s.open+1, len(s.d.res.Findings)), prose: true, style: style}}
	s.detail = newTable(cols, nil, orderBy(len(lines), func(a, b int) int { return 0 }), -1, func(row, col int) string { return lines[row] })
	// Start on the first link: it is what the user most likely wants.
	for i, l := range s.links {
		if l.ok() {
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

package tui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// lineKind is how a line of a detail view is drawn.
type lineKind uint8

const (
	lineText lineKind = iota
	lineTitle
	lineMeta // severity, confidence, saving
	lineSection
	lineLink
)

// detailLines is the text of a detail view (a finding, an op), line by
// line, with where Enter leads from each line and the source line e
// opens from it.
type detailLines struct {
	lines []string
	kinds []lineKind
	links []link
	src   []string
}

// add appends a line of kind that Enter follows to to.
func (d *detailLines) add(text string, kind lineKind, to link) {
	d.lines = append(d.lines, text)
	d.kinds = append(d.kinds, kind)
	d.links = append(d.links, to)
	d.src = append(d.src, "")
}

// addSource appends a line naming Python source line src, which e opens.
func (d *detailLines) addSource(text, src string) {
	d.add(text, lineLink, noLink)
	d.src[len(d.src)-1] = src
}

// table makes the lines a one-column table titled title, its cursor on
// the first line Enter or e acts on; meta is the style of lineMeta
// lines.
func (d *detailLines) table(title string, meta func(st *styles) lipgloss.Style) *table {
	kinds, lines := d.kinds, d.lines
	style := func(row int, st *styles) lipgloss.Style {
		switch kinds[row] {
		case lineTitle:
			return st.header
		case lineMeta:
			return meta(st)
		case lineSection:
			return st.title
		case lineLink:
			return st.link
		}
		return st.plain
	}
	cols := []column{{title: title, prose: true, style: style}}
	t := newTable(cols, nil, orderBy(len(lines), func(a, b int) int { return 0 }), -1, func(row, col int) string { return lines[row] })
	for i := range d.lines {
		if d.links[i].ok() || d.src[i] != "" {
			t.selectRow(i)
			break
		}
	}
	return t
}

// selected returns the line under t's cursor, where t is d's table.
func (d *detailLines) selected(t *table) (int, bool) {
	i, ok := t.selected()
	return i, ok && i < len(d.lines)
}

// selection is the line under t's cursor, trimmed, or, unless row, the
// full name of the kernel it links to.
func (d *detailLines) selection(dd *data, t *table, row bool) (string, bool) {
	i, ok := d.selected(t)
	if !ok {
		return "", false
	}
	if k := d.links[i].kernel; k >= 0 && !row {
		return dd.kernels[k].full, true
	}
	if d.src[i] != "" && !row {
		return sanitize(d.src[i]), true
	}
	return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(d.lines[i]), "→")), true
}

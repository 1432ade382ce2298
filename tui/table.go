package tui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// column describes one column of a table.
type column struct {
	title string
	// width in cells; the first column with width 0 is the flexible one
	// (names) and takes what the others leave.
	width int
	right bool
	// prose columns (finding titles) are cut at the end, not the middle.
	prose bool
	// drop orders which columns disappear first on narrow terminals
	// (highest first); 0 means always shown.
	drop int
	// order is the rows sorted by this column, precomputed when the data
	// is built so that cycling the sort costs nothing; nil when the column
	// is not sortable.
	order []int32
	// asc says order runs from the smallest value up (names, ranks);
	// figures run from the largest down. The header's arrow says which.
	asc bool
	// style, when set, colours the column's cell of a row (a severity,
	// a category, a better/worse change); the cursor row stays uniform.
	style func(row int, st *styles) lipgloss.Style
}

// table is a scrollable, sortable, filterable list of rows that renders
// only the rows on screen. Cells are produced on demand by cell, so a
// table of 10 000 kernels formats at most a screenful of them per frame.
// It stays custom rather than bubbles/table: that one takes every row as
// preformatted cell strings (100 000 cells for 10 000 kernels, rebuilt by
// SetRows on each sort or filter keystroke, against the 16 ms per keypress
// budget), and has no sorting, filtering, middle-cut names or columns that
// drop out on narrow terminals.
type table struct {
	cols []column
	cell func(row, col int) string
	// extra is text the filter matches besides the cells, one per row
	// (a kernel's full name behind its short one), or nil.
	extra []string
	// key is the lower-cased text the filter matches, one per row: every
	// column's cell and extra. It is built on the first filter, so a
	// table nobody filters costs nothing.
	key []string
	// base is the order used when no column is sortable (tree views).
	base []int32

	sortCol int
	// reverse flips the sort column's order (S); rev caches the flipped
	// orders, one per column, made on first use.
	reverse bool
	rev     [][]int32
	filter  string
	view    []int32 // rows shown, in order
	cursor  int     // index into view
	// hideCursor draws the cursor row like the others (a list the
	// cursor is not in).
	hideCursor bool
	offset     int // first index of view on screen
	height     int // rows on screen, from the last render
}

// newTable builds a table sorted by column sortCol (or in base order when
// that column has no order). The / filter matches every column's text and
// extra.
func newTable(cols []column, extra []string, base []int32, sortCol int, cell func(row, col int) string) *table {
	t := &table{cols: cols, extra: extra, base: base, sortCol: sortCol, cell: cell, height: 10}
	t.refresh()
	return t
}

func (t *table) order() []int32 {
	if !t.sortable() {
		return t.base
	}
	ord := t.cols[t.sortCol].order
	if !t.reverse {
		return ord
	}
	if t.rev == nil {
		t.rev = make([][]int32, len(t.cols))
	}
	if t.rev[t.sortCol] == nil {
		r := make([]int32, len(ord))
		for i, row := range ord {
			r[len(ord)-1-i] = row
		}
		t.rev[t.sortCol] = r
	}
	return t.rev[t.sortCol]
}

// sortable reports whether the table is sorted by one of its columns.
func (t *table) sortable() bool {
	return t.sortCol >= 0 && t.sortCol < len(t.cols) && t.cols[t.sortCol].order != nil
}

// refresh recomputes the visible rows after a sort or filter change,
// keeping the cursor on the same row when it is still shown.
func (t *table) refresh() {
	keep, had := t.selected()
	ord := t.order()
	if t.filter == "" {
		t.view = ord
	} else {
		f := filterMatcher(t.filter)
		t.buildKeys(len(ord))
		view := make([]int32, 0, 64)
		for _, r := range ord {
			if f.match(t.key[r]) {
				view = append(view, r)
			}
		}
		t.view = view
	}
	t.cursor, t.offset = 0, 0
	if had {
		for i, r := range t.view {
			if int(r) == keep {
				t.cursor = i
				break
			}
		}
	}
	t.clamp()
}

// buildKeys makes the filter's text of each of n rows once: what the
// user sees in every column (including those a narrow terminal drops) and
// the extra text.
func (t *table) buildKeys(n int) {
	if t.key != nil {
		return
	}
	t.key = make([]string, n)
	var b strings.Builder
	for r := range n {
		b.Reset()
		for c := range t.cols {
			b.WriteString(t.cell(r, c))
			b.WriteByte(0)
		}
		if r < len(t.extra) {
			b.WriteString(t.extra[r])
		}
		t.key[r] = strings.ToLower(b.String())
	}
}

// setFilter filters rows by a case-insensitive regexp or substring
// (compileFilter).
func (t *table) setFilter(f string) {
	if f == t.filter {
		return
	}
	t.filter = f
	t.refresh()
}

// cycleSort sorts by the next sortable column, in its own direction.
func (t *table) cycleSort() {
	for i := 1; i <= len(t.cols); i++ {
		c := (t.sortCol + i) % len(t.cols)
		if t.cols[c].order != nil {
			t.sortCol, t.reverse = c, false
			t.refresh()
			return
		}
	}
}

// flipSort reverses the direction of the sort column; false when the
// table is not sorted by a column (tree views, detail views).
func (t *table) flipSort() bool {
	if !t.sortable() {
		return false
	}
	t.reverse = !t.reverse
	t.refresh()
	return true
}

// ascending reports whether the rows run from the smallest value of the
// sort column up.
func (t *table) ascending() bool { return t.cols[t.sortCol].asc != t.reverse }

// sortArrow is ▲ for an ascending sort, ▼ for a descending one.
func (t *table) sortArrow() string {
	if t.ascending() {
		return "▲"
	}
	return "▼"
}

// sortName names the column the table is sorted by, or "" (the header
// shows its direction).
func (t *table) sortName() string {
	if t.sortable() {
		return strings.ToLower(t.cols[t.sortCol].title)
	}
	return ""
}

// selected returns the row under the cursor.
func (t *table) selected() (int, bool) {
	if t.cursor < 0 || t.cursor >= len(t.view) {
		return 0, false
	}
	return int(t.view[t.cursor]), true
}

// selectRow puts the cursor on row, clearing a filter that hides it.
func (t *table) selectRow(row int) bool {
	for pass := 0; pass < 2; pass++ {
		for i, r := range t.view {
			if int(r) == row {
				t.cursor = i
				t.offset = max(0, i-t.height/2)
				t.clamp()
				return true
			}
		}
		t.setFilter("")
	}
	return false
}

func (t *table) move(d int) {
	t.cursor += d
	t.clamp()
}

func (t *table) home()     { t.cursor = 0; t.clamp() }
func (t *table) page() int { return max(t.height-1, 1) }
func (t *table) end()      { t.cursor = len(t.view) - 1; t.clamp() }

func (t *table) clamp() {
	if t.cursor >= len(t.view) {
		t.cursor = len(t.view) - 1
	}
	if t.cursor < 0 {
		t.cursor = 0
	}
	h := max(t.height, 1)
	if t.cursor < t.offset {
		t.offset = t.cursor
	}
	if t.cursor >= t.offset+h {
		t.offset = t.cursor - h + 1
	}
	if t.offset > len(t.view)-h {
		t.offset = len(t.view) - h
	}
	if t.offset < 0 {
		t.offset = 0
	}
}

// layout picks the columns that fit in w cells and their widths: columns
// are dropped (highest drop first) until the flexible column gets at least
// minFlex cells.
func (t *table) layout(w int) (shown []int, widths []int) {
	const minFlex = 24
	limit := 0
	for _, c := range t.cols {
		limit = max(limit, c.drop)
	}
	for {
		shown, widths = shown[:0], widths[:0]
		used, flex := 0, -1
		for i, c := range t.cols {
			if c.drop > limit {
				continue
			}
			shown = append(shown, i)
			widths = append(widths, c.width)
			if c.width == 0 && flex < 0 {
				flex = len(widths) - 1
			}
			used += c.width
		}
		rest := w - used - (len(shown) - 1) // one space between columns
		if flex >= 0 {
			if rest >= minFlex || limit == 0 {
				widths[flex] = max(rest, 4)
				return shown, widths
			}
		} else if rest >= 0 || limit == 0 {
			return shown, widths
		}
		limit--
	}
}

// render draws the header and the visible rows in w×h cells (h includes
// the header line).
func (t *table) render(w, h int, st *styles) []string {
	const gutter = 2
	t.height = max(h-1, 1)
	t.clamp()
	shown, widths := t.layout(w - gutter)
	lines := make([]string, 0, h)
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", gutter))
	for i, c := range shown {
		title := t.cols[c].title
		if c == t.sortCol && t.sortable() {
			title += t.sortArrow()
		}
		t.writeCell(&b, title, widths[i], t.cols[c].right, false, i == len(shown)-1)
	}
	lines = append(lines, st.header.Render(strings.TrimRight(b.String(), " ")))
	if len(t.view) == 0 {
		msg := "  no rows"
		if t.filter != "" {
			msg = "  no rows match the filter \"" + sanitize(t.filter) + "\" (Esc clears it)"
		}
		return append(lines, st.dim.Render(cut(msg, w)))
	}
	for i := t.offset; i < len(t.view) && i < t.offset+t.height; i++ {
		row := int(t.view[i])
		b.Reset()
		onCursor := i == t.cursor && !t.hideCursor
		if onCursor {
			b.WriteString("> ")
		} else {
			b.WriteString("  ")
		}
		styled := !onCursor
		for j, c := range shown {
			col := &t.cols[c]
			if styled && col.style != nil {
				var cb strings.Builder
				t.writeCell(&cb, t.cell(row, c), widths[j], col.right, col.prose, true)
				b.WriteString(col.style(row, st).Render(cb.String()))
				if j != len(shown)-1 {
					b.WriteByte(' ')
				}
				continue
			}
			t.writeCell(&b, t.cell(row, c), widths[j], col.right, col.prose, j == len(shown)-1)
		}
		line := b.String()
		if onCursor {
			line = st.cursor.Render(fit(strings.TrimRight(line, " "), w))
		} else {
			line = strings.TrimRight(line, " ")
		}
		lines = append(lines, line)
	}
	return lines
}

func (t *table) writeCell(b *strings.Builder, s string, w int, right, prose, last bool) {
	switch {
	case right:
		b.WriteString(padLeft(s, w))
	case prose:
		b.WriteString(fit(cut(s, w), w))
	default:
		b.WriteString(fit(s, w))
	}
	if !last {
		b.WriteByte(' ')
	}
}

// position describes the cursor for the status line ("12/340").
func (t *table) position() string {
	if len(t.view) == 0 {
		return "0/0"
	}
	return itoa(t.cursor+1) + "/" + itoa(len(t.view))
}

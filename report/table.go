package report

import (
	"fmt"
	"strings"
)

// column is one table column: its header and whether numbers in it are
// right-aligned.
type column struct {
	name  string
	right bool
}

// left and right name a text and a numeric column.
func left(name string) column  { return column{name: name} }
func right(name string) column { return column{name: name, right: true} }

// table is a GFM table under construction. Cells are Markdown fragments
// (built with Code, Text or number formatting); the table escapes every
// pipe in them, so no cell can split into two, and it refuses rows whose
// cell count differs from the header's, so every row of every table has
// the same number of columns.
type table struct {
	cols []column
	rows [][]string
	err  error
}

func newTable(cols ...column) *table { return &table{cols: cols} }

// add appends a row. A row with the wrong number of cells is a bug in the
// report; it is recorded and returned by write instead of producing a
// broken table.
func (t *table) add(cells ...string) {
	if len(cells) != len(t.cols) {
		if t.err == nil {
			t.err = fmt.Errorf("report: table %q: row has %d cells, header has %d", t.cols[0].name, len(cells), len(t.cols))
		}
		return
	}
	t.rows = append(t.rows, cells)
}

// write renders the table followed by a blank line.
func (t *table) write(b *strings.Builder) error {
	if t.err != nil {
		return t.err
	}
	b.WriteString("|")
	for _, c := range t.cols {
		b.WriteString(" ")
		b.WriteString(cell(c.name))
		b.WriteString(" |")
	}
	b.WriteString("\n|")
	for _, c := range t.cols {
		if c.right {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.rows {
		b.WriteString("|")
		for _, c := range r {
			b.WriteString(" ")
			b.WriteString(cell(c))
			b.WriteString(" |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	return nil
}

// cell makes a Markdown fragment safe inside a table cell: pipes are
// escaped (GFM honours \| even inside code spans), and any line break
// that reached this far is flattened so the row cannot end early. An
// empty cell gets a dash so the table reads as deliberate.
func cell(s string) string {
	if s == "" {
		return "–"
	}
	if strings.ContainsAny(s, "|\n\r") {
		s = strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ").Replace(s)
	}
	return s
}

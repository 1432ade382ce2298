package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/distributed"
)

// runFindings is the Ranks screen's list of the run's cross-rank
// findings and the detail of the one Enter opened (evidence, fix, the
// ranks it concerns), laid out as the Findings screen lays out a
// trace's.
type runFindings struct {
	findings []distributed.Finding
	fs       *table // nil without findings
	focus    bool   // the cursor is in fs, not in the rank table
	open     int    // the finding shown, or -1
	detail   *table
	lines    detailLines
	w        int // width the detail was built for
}

func newRunFindings(run *distributed.Result) runFindings {
	rf := runFindings{findings: run.Findings, open: -1}
	fs := run.Findings
	if len(fs) == 0 {
		return rf
	}
	cols := []column{
		{title: "SEVERITY", width: 8, style: func(row int, st *styles) lipgloss.Style { return st.severity(fs[row].Severity) }},
		{title: "RUN FINDINGS", prose: true},
		{title: "SAVING/STEP", width: 12, right: true},
		{title: "RANKS", width: 10, drop: 1},
	}
	cell := func(row, col int) string {
		f := &fs[row]
		switch col {
		case 0:
			return f.Severity
		case 1:
			return sanitize(f.Title)
		case 2:
			if f.SavingFrom == analyze.FromOneOff {
				return "once " + us(f.OneOffUs).String()
			}
			return us(f.SavingUs).String()
		case 3:
			return strings.Trim(fmt.Sprint(f.Ranks), "[]")
		}
		return ""
	}
	rf.fs = newTable(cols, nil, orderBy(len(fs), func(a, b int) int { return 0 }), -1, cell)
	rf.fs.hideCursor = true
	return rf
}

// setFocus moves the cursor into the findings list (or back out).
func (r *runFindings) setFocus(on bool) {
	r.focus = on
	r.fs.hideCursor = !on
}

// findingKeys handles keys while the cursor is in the findings or a
// finding is open: Enter opens the finding, or follows the detail's
// link; ↑ on the first finding goes back to the ranks.
func (r *runFindings) findingKeys(m *Model, d *data, msg tea.KeyMsg) bool {
	km := &m.keys
	if r.detail != nil {
		if key.Matches(msg, km.open) {
			if i, ok := r.lines.selected(r.detail); ok {
				r.lines.links[i].follow(m)
			}
			return true
		}
		return tableKeys(r.detail, km, msg)
	}
	switch {
	case key.Matches(msg, km.up) && r.fs.cursor == 0:
		r.setFocus(false)
		return true
	case key.Matches(msg, km.open):
		if row, ok := r.fs.selected(); ok {
			r.open = row
			r.build(d, max(m.width-2, 20))
		}
		return true
	}
	return tableKeys(r.fs, km, msg)
}

// build lays the open finding out for width w.
func (r *runFindings) build(d *data, w int) {
	f := &r.findings[r.open]
	r.lines = findingLines(d, &f.Finding, f.Ranks, w)
	r.detail = r.lines.table(fmt.Sprintf("RUN FINDING %d OF %d", r.open+1, len(r.findings)),
		func(st *styles) lipgloss.Style { return st.severity(f.Severity) })
	r.w = w
}

func (r *runFindings) renderDetail(d *data, w, h int, st *styles) []string {
	if r.w != w-2 {
		cursor := r.detail.cursor
		r.build(d, w-2)
		r.detail.cursor = cursor
	}
	return r.detail.render(w, h, st)
}

// closeFinding closes the open finding, or leaves the findings list for
// the ranks, reporting whether it did either.
func (r *runFindings) closeFinding() bool {
	switch {
	case r.detail != nil:
		r.open, r.detail = -1, nil
	case r.focus:
		r.setFocus(false)
	default:
		return false
	}
	return true
}

func (r *runFindings) findingHint() string {
	switch {
	case r.detail != nil:
		return fmt.Sprintf("run finding %d/%d  line %s  Enter on → follows  Esc back", r.open+1, len(r.findings), r.detail.position())
	case r.focus:
		return r.fs.position() + " run findings  Enter opens  ↑ or Esc: ranks"
	}
	return ""
}

// saved is a copy of the state, for the back stack.
func (r *runFindings) saved() runFindings {
	c := *r
	c.fs, c.detail = r.fs.clone(), r.detail.clone()
	return c
}

// restore puts a saved state back, keeping the findings table's pointer.
func (r *runFindings) restore(c runFindings) {
	fs := r.fs
	restoreTable(fs, c.fs)
	*r = c
	r.fs = fs
}

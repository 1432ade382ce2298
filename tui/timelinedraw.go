package tui

import (
	"fmt"
	"strings"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/trace"
)

// shades are the block characters for busy fractions 0, (0,¼], … (¾,1].
var shades = [...]string{" ", "░", "▒", "▓", "█"}

// idleMark fills a GPU column with no activity at all, so a gap shows
// even without colour.
const idleMark = "·"

func (s *timelineScreen) render(w, h int, st *styles) []string {
	t := s.d.t
	if len(s.lanes) == 0 {
		return []string{"", "  no activity in this trace"}
	}
	s.cols = max(w-s.labelW-1, 10)
	s.place()
	var out []string
	where := "whole trace"
	if s.step >= 0 {
		where = fmt.Sprintf("step #%d (%d of %d)", t.Steps[s.step].Number, s.step+1, len(t.Steps))
	}
	b := s.bounds()
	zoom := float64(b.Dur()) / float64(max(s.win.Dur(), 1))
	head := fmt.Sprintf(" %s  %s  window %s–%s  zoom %.0f×  %s/column", where, b.Dur(),
		trace.Duration(s.win.Start-b.Start), trace.Duration(s.win.End-b.Start), zoom, s.colDur())
	if s.ranksNote != "" {
		head += "  · " + s.ranksNote
	}
	out = append(out, cut(head, w))
	out = append(out, s.ruler(b.Start))
	if len(s.shown) == 0 {
		return append(out, st.dim.Render(cut("  no lane matches the filter \""+s.filter+"\" (Esc clears it)", w)))
	}
	tail := s.readout(w, b, st)
	out = append(out, s.laneRows(h-len(out)-len(tail), st)...)
	return append(out, tail...)
}

// place puts the cursor on the first activity on the first frame, or on
// the place a link asked for.
func (s *timelineScreen) place() {
	if !s.placed {
		s.placed = true
		if l := &s.lanes[0]; l.n > 0 {
			s.cur = s.colOf(l.start(0))
		}
	}
	if s.hasCurAt {
		// The first column that starts inside the place: its whole
		// interval then reads the place, not what came before it.
		s.hasCurAt = false
		s.cur = s.colOf(s.curAt)
		if s.colStart(s.cur) < s.curAt {
			s.cur++
		}
	}
	s.cur = min(max(s.cur, 0), s.cols-1)
}

// readout is what is drawn under the lanes: the cursor line, where the
// cursor is, what the selected lane has under it, the legend.
func (s *timelineScreen) readout(w int, b trace.Span, st *styles) []string {
	out := []string{s.cursorLine(st)}
	a := s.colStart(s.cur)
	where := fmt.Sprintf(" cursor %s into the %s", trace.Duration(a-b.Start), map[bool]string{true: "step", false: "trace"}[s.step >= 0])
	if s.markWhat != "" {
		where += fmt.Sprintf("   ━ %s: %s at +%s", s.markWhat, s.mark.Dur(), trace.Duration(s.mark.Start-b.Start))
	}
	out = append(out, cut(where, w))
	l, i := s.underCursor()
	if i >= 0 {
		hint := ""
		switch {
		case !l.own:
			hint = "  (Enter on screen 7 shows this rank's trace)"
		case l.kind == laneGPU && l.t.GPU[l.ref(i)].Kind == trace.Kernel:
			hint = "  (Enter: kernel detail)"
		case l.kind == laneOps:
			hint = "  (Enter: op detail)"
		case l.kind == laneSteps:
			hint = "  (Enter: this step)"
		}
		out = append(out, cut(fmt.Sprintf(" %s: %s at +%s  %s%s", l.what, trace.Duration(l.end(i)-l.start(i)), trace.Duration(l.start(i)-b.Start), l.describe(i), hint), w))
	} else {
		out = append(out, cut(fmt.Sprintf(" %s: idle", l.what), w))
	}
	if lg := s.legend(w, st); lg != "" {
		out = append(out, lg)
	}
	return out
}

// densityCells draws a busy lane: one shade per column, coloured by the
// lane's kind; on a GPU stream by the category of the kernel at the
// column's middle, and a column with no activity at all is an idle mark.
func (s *timelineScreen) densityCells(l *lane, st *styles) string {
	var sb, run strings.Builder
	runStyle := ""
	idle := "\x00idle"
	flush := func() {
		switch runStyle {
		case "":
			sb.WriteString(run.String())
		case idle:
			sb.WriteString(st.idleLane.Render(run.String()))
		case "\x00lane":
			sb.WriteString(l.style(st).Render(run.String()))
		default:
			sb.WriteString(st.category(runStyle).Render(run.String()))
		}
		run.Reset()
	}
	prev := l.busyBefore(s.colStart(0))
	for c := 0; c < s.cols; c++ {
		a, z := s.colStart(c), s.colStart(c+1)
		next := l.busyBefore(z)
		f := float64(next-prev) / float64(max(z-a, 1))
		prev = next
		cell, style := shades[0], runStyle
		switch {
		case f > 0 && l.kind == laneGPU:
			cell, style = shades[min(int(f*4-1e-9)+1, 4)], s.gpuCategory(l, a, z)
		case f > 0:
			cell, style = shades[min(int(f*4-1e-9)+1, 4)], "\x00lane"
		case l.kind == laneGPU:
			cell, style = idleMark, idle
		}
		if style != runStyle {
			flush()
			runStyle = style
		}
		run.WriteString(cell)
	}
	flush()
	return strings.TrimRight(sb.String(), " ")
}

// gpuCategory is the category (analyze's) of the GPU activity at the
// middle of column [a, b) of a stream lane, or of the first one in it.
func (s *timelineScreen) gpuCategory(l *lane, a, b trace.Time) string {
	mid := a + (b-a)/2
	i := l.first(mid+1) - 1
	if i < 0 || l.end(i) <= a {
		i++
	}
	if i < 0 || i >= l.n || l.start(i) >= b {
		return "\x00lane"
	}
	g := &l.t.GPU[l.ref(i)]
	switch g.Kind {
	case trace.Memcpy:
		return analyze.CategoryCopy
	case trace.Memset:
		return analyze.CategoryMemset
	}
	if row, ok := s.d.kernelIndex[g.Name]; ok {
		return s.d.kernels[row].Category
	}
	return "\x00lane"
}

// legend names the colours of the GPU lanes: the trace's categories in
// their colours (none without colour).
func (s *timelineScreen) legend(w int, st *styles) string {
	if !st.colour {
		return ""
	}
	parts := []string{" GPU by category:"}
	for _, c := range s.d.res.Categories {
		parts = append(parts, st.category(c.Category).Render("█ "+c.Category))
	}
	parts = append(parts, st.idleLane.Render(idleMark+" idle"))
	return cut(strings.Join(parts, " "), w)
}

// spanCells draws steps and ranges as labelled spans: the name where the
// outermost item starts, then a line to its end. Lanes with more items in
// the window than columns fall back to density.
func (s *timelineScreen) spanCells(l *lane, st *styles) string {
	cells := make([]string, s.cols)
	for i := range cells {
		cells[i] = " "
	}
	drawn := 0
	for k := 0; k < len(l.tops); k++ {
		i := int(l.tops[k])
		if l.end(i) <= s.win.Start {
			continue
		}
		if l.start(i) >= s.win.End {
			break
		}
		if drawn++; drawn > s.cols {
			return s.densityCells(l, st)
		}
		a, z := max(s.colOf(l.start(i)), 0), min(s.colOf(l.end(i)-1), s.cols-1)
		label := []rune(l.describe(i))
		if l.kind == laneSteps {
			label = []rune(fmt.Sprintf("#%d", l.t.Steps[i].Number))
		}
		for c := a; c <= z; c++ {
			switch {
			case c == a:
				cells[c] = "▕"
			case c-a-1 < len(label) && c < z:
				cells[c] = string(label[c-a-1])
			default:
				cells[c] = "─"
			}
		}
	}
	line := strings.TrimRight(strings.Join(cells, ""), " ")
	return l.style(st).Render(line)
}

// cursorLine marks the cursor column with ▲ and underlines the place the
// last link showed, when it is in the window.
func (s *timelineScreen) cursorLine(st *styles) string {
	cells := []rune(strings.Repeat(" ", s.cols))
	if s.mark.End > s.mark.Start && s.mark.End > s.win.Start && s.mark.Start < s.win.End {
		a, z := max(s.colOf(s.mark.Start), 0), min(s.colOf(s.mark.End-1), s.cols-1)
		for c := a; c <= z; c++ {
			cells[c] = '━'
		}
	}
	cells[s.cur] = '▲'
	line := strings.TrimRight(string(cells), " ")
	return strings.Repeat(" ", s.labelW+1) + st.warn.Render(line)
}

// ruler labels the time axis relative to the start of the bounds.
func (s *timelineScreen) ruler(origin trace.Time) string {
	line := []rune(strings.Repeat(" ", s.labelW+1+s.cols))
	for c := 0; c < s.cols; c += 16 {
		label := "|" + trace.Duration(s.colStart(c)-origin).String()
		pos := s.labelW + 1 + c
		for i, r := range []rune(label) {
			if pos+i < len(line) {
				line[pos+i] = r
			}
		}
	}
	return strings.TrimRight(string(line), " ")
}

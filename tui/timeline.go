package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/trace"
)

// timelineScreen is screen 5: GPU streams, host threads (ops and Python
// frames) and annotation lanes (steps, user ranges) on one time axis, for
// one step or the whole trace, so a gap on a stream lines up with what the
// host was doing meanwhile. Busy lanes are drawn with block characters
// whose density is the fraction of each column's time the lane was busy;
// steps and ranges as labelled spans.
type timelineScreen struct {
	d     *data
	lanes []lane
	shown []int // lanes the / filter keeps
	whole trace.Span
	step  int        // index into t.Steps, or -1 for the whole trace
	win   trace.Span // the part shown (zoom and pan)
	cur   int        // cursor column
	lane  int        // index into shown of the lane the cursor reads
	cols  int        // columns of the last render
	// placed is set once the cursor has been put on the first activity,
	// so the first frame names a kernel rather than the idle start.
	placed bool
	// curAt, when hasCurAt, is a time the next render puts the cursor on
	// (a link's place, set before the column count is known).
	curAt    trace.Time
	hasCurAt bool
	filter   string
	// mark is the place a link showed (a gap, a chain), underlined below
	// the lanes and named markWhat; empty when none.
	mark     trace.Span
	markWhat string
}

const laneLabelW = 11

func newTimeline(d *data) *timelineScreen {
	t := d.t
	s := &timelineScreen{d: d, step: -1, whole: t.Span(), lanes: buildLanes(t)}
	s.win = s.whole
	s.setFilter("")
	return s
}

func (s *timelineScreen) title() string { return "Timeline" }

func (s *timelineScreen) colDur() trace.Duration {
	return max(trace.Duration(s.win.End-s.win.Start)/trace.Duration(max(s.cols, 1)), 1)
}

func (s *timelineScreen) colStart(c int) trace.Time {
	return s.win.Start + trace.Time(int64(s.win.End-s.win.Start)*int64(c)/int64(max(s.cols, 1)))
}

// colOf is the column time x falls in (possibly off screen).
func (s *timelineScreen) colOf(x trace.Time) int {
	return int(int64(x-s.win.Start) * int64(max(s.cols, 1)) / int64(max(s.win.Dur(), 1)))
}

// bounds is the span the window may move in: the chosen step or the trace.
func (s *timelineScreen) bounds() trace.Span {
	if s.step >= 0 {
		return s.d.t.Steps[s.step].Span
	}
	return s.whole
}

func (s *timelineScreen) setStep(i int) {
	s.step = i
	s.win = s.bounds()
}

// zoom scales the window by f around the cursor, keeping it in bounds.
func (s *timelineScreen) zoom(f float64) {
	b := s.bounds()
	at := s.colStart(s.cur)
	span := trace.Duration(float64(s.win.End-s.win.Start) * f)
	span = min(max(span, trace.Duration(max(s.cols, 1))), b.Dur())
	left := float64(s.cur) / float64(max(s.cols, 1))
	start := at - trace.Time(float64(span)*left)
	s.win = trace.Span{Start: start, End: start + trace.Time(span)}
	s.clampWin()
}

func (s *timelineScreen) pan(frac float64) {
	d := trace.Time(float64(s.win.End-s.win.Start) * frac)
	s.win.Start += d
	s.win.End += d
	s.clampWin()
}

func (s *timelineScreen) clampWin() {
	b := s.bounds()
	if s.win.Start < b.Start {
		s.win.End += b.Start - s.win.Start
		s.win.Start = b.Start
	}
	if s.win.End > b.End {
		s.win.Start -= s.win.End - b.End
		s.win.End = b.End
	}
	s.win.Start = max(s.win.Start, b.Start)
}

// show puts span at the middle third of the window, the cursor on its
// start and, when lane >= 0, the cursor on that lane: a link from a
// finding's gap or chain lands here.
func (s *timelineScreen) show(span trace.Span, laneIdx int, what string) {
	s.placed = true
	s.mark, s.markWhat = span, what
	s.step = -1
	if i := s.d.t.StepOf(span.Start); i >= 0 && !s.d.t.Steps[i].Synthetic && span.End <= s.d.t.Steps[i].End {
		s.step = i
	}
	d := max(span.Dur(), trace.Duration(max(s.cols, 1)))
	s.win = trace.Span{Start: span.Start - trace.Time(d), End: span.End + trace.Time(d)}
	s.clampWin()
	// The column count is known at the next render, which places the
	// cursor.
	s.curAt, s.hasCurAt = span.Start, true
	if laneIdx >= 0 {
		s.filter = ""
		s.setFilter("")
		s.lane = laneIdx
	}
}

// laneOfGPU returns the lane of a device's stream, or -1.
func (s *timelineScreen) laneOfGPU(device, stream int32) int {
	for i := range s.lanes {
		l := &s.lanes[i]
		if l.kind == laneGPU && l.n > 0 {
			g := &s.d.t.GPU[l.ref(0)]
			if g.Device == device && g.Stream == stream {
				return i
			}
		}
	}
	return -1
}

func (s *timelineScreen) handle(m *Model, msg tea.KeyMsg) bool {
	steps := s.d.t.Steps
	km := &m.keys
	switch {
	case key.Matches(msg, km.cursorLeft):
		if s.cur == 0 {
			s.pan(-0.25)
		}
		s.cur = max(s.cur-1, 0)
	case key.Matches(msg, km.cursorRight):
		if s.cur == s.cols-1 {
			s.pan(0.25)
		}
		s.cur = min(s.cur+1, max(s.cols-1, 0))
	case key.Matches(msg, km.lineStart):
		s.cur = 0
	case key.Matches(msg, km.lineEnd):
		s.cur = max(s.cols-1, 0)
	case key.Matches(msg, km.panLeft):
		s.pan(-0.25)
	case key.Matches(msg, km.panRight):
		s.pan(0.25)
	case key.Matches(msg, km.pageLeft):
		s.pan(-1)
	case key.Matches(msg, km.pageRight):
		s.pan(1)
	case key.Matches(msg, km.zoomIn):
		s.zoom(0.5)
	case key.Matches(msg, km.zoomOut):
		s.zoom(2)
	case key.Matches(msg, km.laneUp):
		s.lane = max(s.lane-1, 0)
	case key.Matches(msg, km.laneDown):
		s.lane = min(s.lane+1, max(len(s.shown)-1, 0))
	case key.Matches(msg, km.prevStep):
		if len(steps) > 0 && !steps[0].Synthetic {
			if s.step <= 0 {
				s.setStep(len(steps) - 1)
			} else {
				s.setStep(s.step - 1)
			}
		}
	case key.Matches(msg, km.nextStep):
		if len(steps) > 0 && !steps[0].Synthetic {
			s.setStep((s.step + 1) % len(steps))
		}
	case key.Matches(msg, km.wholeTrace):
		s.setStep(-1)
	case key.Matches(msg, km.open):
		s.open(m)
	default:
		return false
	}
	return true
}

// open follows what is under the cursor: a kernel to its detail, an op
// to its row in the Ops table, a step to the step's window.
func (s *timelineScreen) open(m *Model) {
	l, i := s.underCursor()
	if i < 0 {
		return
	}
	t := s.d.t
	switch l.kind {
	case laneGPU:
		g := &t.GPU[l.ref(i)]
		if row, ok := s.d.kernelIndex[g.Name]; ok && g.Kind == trace.Kernel {
			m.showKernel(row)
		}
	case laneOps:
		m.showOp(t.Ops[l.ref(i)].Name)
	case laneSteps:
		step := l.ref(i)
		m.follow(func() { s.setStep(step) })
	}
}

// underCursor returns the lane the cursor reads and its item under the
// cursor column (-1 when idle).
func (s *timelineScreen) underCursor() (*lane, int) {
	if len(s.shown) == 0 {
		return nil, -1
	}
	l := &s.lanes[s.shown[min(s.lane, len(s.shown)-1)]]
	return l, l.under(s.colStart(s.cur), s.colStart(s.cur+1))
}

func (s *timelineScreen) scroll(d int) {
	s.lane = min(max(s.lane+d/3, 0), max(len(s.shown)-1, 0))
}

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
	s.cols = max(w-laneLabelW-1, 10)
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
	cd := s.colDur()
	var out []string
	where := "whole trace"
	if s.step >= 0 {
		where = fmt.Sprintf("step #%d (%d of %d)", t.Steps[s.step].Number, s.step+1, len(t.Steps))
	}
	b := s.bounds()
	zoom := float64(b.Dur()) / float64(max(s.win.Dur(), 1))
	out = append(out, cut(fmt.Sprintf(" %s  %s  window %s–%s  zoom %.0f×  %s/column", where, b.Dur(),
		trace.Duration(s.win.Start-b.Start), trace.Duration(s.win.End-b.Start), zoom, cd), w))
	out = append(out, s.ruler(b.Start))
	if len(s.shown) == 0 {
		return append(out, st.dim.Render(cut("  no lane matches the filter \""+s.filter+"\" (Esc clears it)", w)))
	}
	// Lanes: as many as fit, scrolled so the selected one shows.
	s.lane = min(s.lane, len(s.shown)-1)
	room := max(h-len(out)-3, 1)
	first := 0
	if s.lane >= room {
		first = s.lane - room + 1
	}
	for li := first; li < len(s.shown) && li < first+room; li++ {
		l := &s.lanes[s.shown[li]]
		mark := "  "
		label := st.plain
		if li == s.lane {
			mark = "> "
			label = st.header
		}
		line := label.Render(fit(mark+l.label, laneLabelW)) + "|"
		switch {
		case l.spans():
			line += s.spanCells(l, st)
		case l.kind == lanePy:
			line += s.frameCells(l, st)
		default:
			line += s.densityCells(l, st)
		}
		out = append(out, line)
	}
	out = append(out, s.cursorLine(st))
	a := s.colStart(s.cur)
	where = fmt.Sprintf(" cursor %s into the %s", trace.Duration(a-b.Start), map[bool]string{true: "step", false: "trace"}[s.step >= 0])
	if s.markWhat != "" {
		where += fmt.Sprintf("   ━ %s: %s at +%s", s.markWhat, s.mark.Dur(), trace.Duration(s.mark.Start-b.Start))
	}
	out = append(out, cut(where, w))
	l, i := s.underCursor()
	if i >= 0 {
		hint := ""
		switch l.kind {
		case laneGPU:
			if t.GPU[l.ref(i)].Kind == trace.Kernel {
				hint = "  (Enter: kernel detail)"
			}
		case laneOps:
			hint = "  (Enter: op in the Ops table)"
		case laneSteps:
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
	g := &s.d.t.GPU[l.ref(i)]
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
			label = []rune(fmt.Sprintf("#%d", s.d.t.Steps[i].Number))
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
	return strings.Repeat(" ", laneLabelW+1) + st.warn.Render(line)
}

// frameCells draws a Python lane like a flame graph at the window's level
// of detail: each column shows the outermost frame under it that is
// shorter than a quarter of the window, named where it changes. Frames
// longer than that (the script, the training loop) would draw one bar
// across the lane; the readout under the lanes names them.
func (s *timelineScreen) frameCells(l *lane, st *styles) string {
	var b strings.Builder
	limit := s.win.Dur() / 4
	prevName, pos := "", 0
	var label []rune
	for c := 0; c < s.cols; c++ {
		a := s.colStart(c)
		i := l.cover(a + (s.colStart(c+1)-a)/2)
		if i < 0 {
			b.WriteByte(' ')
			prevName = ""
			continue
		}
		if l.parent != nil {
			for p := l.parent(i); p >= 0 && p < i && trace.Duration(l.end(p)-l.start(p)) < limit; p = l.parent(p) {
				i = p
			}
		}
		name := l.label2(i)
		switch {
		case name != prevName:
			label, pos = []rune(name), 0
			b.WriteString("▕")
		case pos < len(label):
			b.WriteRune(label[pos])
			pos++
		default:
			b.WriteString("─")
		}
		prevName = name
	}
	return l.style(st).Render(strings.TrimRight(b.String(), " "))
}

// ruler labels the time axis relative to the start of the bounds.
func (s *timelineScreen) ruler(origin trace.Time) string {
	line := []rune(strings.Repeat(" ", laneLabelW+1+s.cols))
	for c := 0; c < s.cols; c += 16 {
		label := "|" + trace.Duration(s.colStart(c)-origin).String()
		pos := laneLabelW + 1 + c
		for i, r := range []rune(label) {
			if pos+i < len(line) {
				line[pos+i] = r
			}
		}
	}
	return strings.TrimRight(string(line), " ")
}

func (s *timelineScreen) hint() string {
	return itoa(len(s.shown)) + " lanes  ←→hl cursor  <> pan  +- zoom  [] step  a all  ↑↓ lane  ⏎ opens"
}

// setFilter keeps the lanes whose label or name contains f ("gpu", "py",
// a thread's name).
func (s *timelineScreen) setFilter(f string) bool {
	s.filter = f
	s.shown = s.shown[:0]
	lf := strings.ToLower(f)
	for i := range s.lanes {
		if strings.Contains(s.lanes[i].key, lf) {
			s.shown = append(s.shown, i)
		}
	}
	s.lane = min(s.lane, max(len(s.shown)-1, 0))
	return true
}

func (s *timelineScreen) back() bool { return false }

func (s *timelineScreen) save() func() {
	saved := *s
	saved.shown = slices.Clone(s.shown)
	return func() {
		lanes := s.lanes
		*s = saved
		s.lanes = lanes
	}
}

// selection is what the cursor reads: a kernel's full name, an op's
// path, a frame's stack, a step or range; or the readout's whole line.
func (s *timelineScreen) selection(row bool) (string, bool) {
	l, i := s.underCursor()
	if i < 0 {
		return "", false
	}
	text := l.describe(i)
	if l.kind == laneGPU {
		g := &s.d.t.GPU[l.ref(i)]
		if g.Kind == trace.Kernel {
			text = sanitize(g.Name)
		}
	}
	if row {
		text = l.what + "\t" + trace.Duration(l.end(i)-l.start(i)).String() + "\t" + text
	}
	return text, true
}

// sourceLine is the source line of what the cursor reads: a Python
// frame's own, or the user's line analyze found above a GPU launch.
func (s *timelineScreen) sourceLine() string {
	l, i := s.underCursor()
	if i < 0 {
		return ""
	}
	switch l.kind {
	case lanePy:
		return s.d.t.Frames[l.ref(i)].Name
	case laneGPU:
		return s.d.res.View().UserLine(l.ref(i))
	}
	return ""
}

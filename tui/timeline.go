package tui

import (
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

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
	// labelW is the width of the lane labels, "> " included.
	labelW int
	// In a run: ranksAsked once the other ranks' traces were asked
	// for, and ranksNote what the header says about them.
	ranksAsked bool
	ranksNote  string
}

// minLabelW is the narrowest lane label column.
const minLabelW = 11

func newTimeline(d *data) *timelineScreen {
	t := d.t
	s := &timelineScreen{d: d, step: -1, whole: d.span}
	lanes := d.lanes
	if lanes == nil {
		lanes, s.whole = buildLanes(t), t.Span()
	}
	s.setLanes(lanes)
	if d.run != nil {
		for i := range s.lanes {
			s.lanes[i].setGroup(rankGroup(d.run, d.rank))
		}
		s.setLanes(s.lanes)
	}
	s.win = s.whole
	s.setFilter("")
	return s
}

// setLanes shows lanes, sizing the label column to them.
func (s *timelineScreen) setLanes(ls []lane) {
	s.lanes = ls
	s.labelW = minLabelW
	for i := range ls {
		w := 2 + width(ls[i].label)
		if ls[i].group != "" {
			w += width(ls[i].group) + 1
		}
		s.labelW = max(s.labelW, w+1)
	}
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
		if l.kind == laneGPU && l.n > 0 && l.own {
			g := &l.t.GPU[l.ref(0)]
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
	if i < 0 || !l.own {
		return
	}
	t := l.t
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
		lanes, labelW, asked, note := s.lanes, s.labelW, s.ranksAsked, s.ranksNote
		*s = saved
		s.lanes, s.labelW, s.ranksAsked, s.ranksNote = lanes, labelW, asked, note
		if len(lanes) != len(saved.lanes) {
			// The run's other ranks arrived meanwhile.
			s.setFilter(s.filter)
		}
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
		g := &l.t.GPU[l.ref(i)]
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
		return l.t.Frames[l.ref(i)].Name
	case laneGPU:
		if l.own {
			return s.d.res.View().UserLine(l.ref(i))
		}
	}
	return ""
}

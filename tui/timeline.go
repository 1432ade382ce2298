package tui

import (
	"fmt"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/trace"
)

// timelineScreen is screen 5: one lane per GPU stream, drawn with block
// characters whose density is the fraction of each column's time the
// stream was busy, for one step or the whole trace.
type timelineScreen struct {
	d     *data
	lanes []lane
	whole trace.Span
	step  int        // index into t.Steps, or -1 for the whole trace
	win   trace.Span // the part shown (zoom and pan)
	cur   int        // cursor column
	lane  int        // lane the cursor reads
	cols  int        // columns of the last render
	// placed is set once the cursor has been put on the first activity,
	// so the first frame names a kernel rather than the idle start.
	placed bool
}

// lane is one stream's activities: t.GPU[from:to] (sorted by start), with
// prefix sums of their durations so the busy time of any interval costs
// two binary searches however many kernels the stream ran.
type lane struct {
	label    string
	from, to int
	prefix   []trace.Duration
}

const laneLabelW = 11

func newTimeline(d *data) *timelineScreen {
	t := d.t
	s := &timelineScreen{d: d, step: -1, whole: t.Span()}
	for i := 0; i < len(t.GPU); {
		j := i
		for j < len(t.GPU) && t.GPU[j].Device == t.GPU[i].Device && t.GPU[j].Stream == t.GPU[i].Stream {
			j++
		}
		l := lane{label: fmt.Sprintf("gpu%d s%d", t.GPU[i].Device, t.GPU[i].Stream), from: i, to: j, prefix: make([]trace.Duration, j-i+1)}
		for k := i; k < j; k++ {
			l.prefix[k-i+1] = l.prefix[k-i] + t.GPU[k].Dur()
		}
		s.lanes = append(s.lanes, l)
		i = j
	}
	s.win = s.whole
	return s
}

func (s *timelineScreen) title() string { return "Timeline" }

// busyBefore returns how long the lane was busy before time x. A stream
// runs one activity at a time, so only the last one started can straddle x.
func (s *timelineScreen) busyBefore(l *lane, x trace.Time) trace.Duration {
	g := s.d.t.GPU[l.from:l.to]
	k := sort.Search(len(g), func(i int) bool { return g[i].Start >= x })
	b := l.prefix[k]
	if k > 0 && g[k-1].End > x {
		b -= trace.Duration(g[k-1].End - x)
	}
	return max(b, 0)
}

// under returns the activity of lane l covering most of [a, b), or -1.
func (s *timelineScreen) under(l *lane, a, b trace.Time) int {
	g := s.d.t.GPU[l.from:l.to]
	hi := sort.Search(len(g), func(i int) bool { return g[i].Start >= b })
	best, bestOv := -1, trace.Duration(0)
	for i, n := hi-1, 0; i >= 0 && n < 4096; i, n = i-1, n+1 {
		if g[i].End <= a {
			break
		}
		ov := trace.Duration(min(g[i].End, b) - max(g[i].Start, a))
		if ov > bestOv {
			best, bestOv = l.from+i, ov
		}
	}
	return best
}

func (s *timelineScreen) colDur() trace.Duration {
	return max(trace.Duration(s.win.End-s.win.Start)/trace.Duration(max(s.cols, 1)), 1)
}

func (s *timelineScreen) colStart(c int) trace.Time {
	return s.win.Start + trace.Time(int64(s.win.End-s.win.Start)*int64(c)/int64(max(s.cols, 1)))
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
		s.lane = min(s.lane+1, max(len(s.lanes)-1, 0))
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
	default:
		return false
	}
	return true
}

func (s *timelineScreen) scroll(d int) {
	s.lane = min(max(s.lane+d/3, 0), max(len(s.lanes)-1, 0))
}

// shades are the block characters for busy fractions 0, (0,¼], … (¾,1].
var shades = [...]string{" ", "░", "▒", "▓", "█"}

func (s *timelineScreen) render(w, h int, st *styles) []string {
	t := s.d.t
	if len(s.lanes) == 0 {
		return []string{"", "  no GPU activity in this trace"}
	}
	s.cols = max(w-laneLabelW-1, 10)
	if !s.placed {
		s.placed = true
		l := &s.lanes[0]
		first := t.GPU[l.from].Start
		s.cur = int(int64(first-s.win.Start) * int64(s.cols) / int64(max(s.win.Dur(), 1)))
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
	out = append(out, s.stepMarks())
	// Lanes: as many as fit, scrolled so the selected one shows.
	room := max(h-len(out)-4, 1)
	first := 0
	if s.lane >= room {
		first = s.lane - room + 1
	}
	var sb strings.Builder
	for li := first; li < len(s.lanes) && li < first+room; li++ {
		l := &s.lanes[li]
		sb.Reset()
		mark := "  "
		if li == s.lane {
			mark = "> "
		}
		sb.WriteString(fit(mark+l.label, laneLabelW))
		sb.WriteByte('|')
		prev := s.busyBefore(l, s.colStart(0))
		for c := 0; c < s.cols; c++ {
			next := s.busyBefore(l, s.colStart(c+1))
			span := s.colStart(c+1) - s.colStart(c)
			f := float64(next-prev) / float64(max(span, 1))
			prev = next
			i := 0
			if f > 0 {
				i = min(int(f*4-1e-9)+1, 4)
			}
			sb.WriteString(shades[i])
		}
		out = append(out, st.bar.Render(sb.String()))
	}
	out = append(out, strings.Repeat(" ", laneLabelW+1+s.cur)+"▲")
	a, z := s.colStart(s.cur), s.colStart(s.cur+1)
	out = append(out, cut(fmt.Sprintf(" cursor %s into the %s", trace.Duration(a-b.Start), map[bool]string{true: "step", false: "trace"}[s.step >= 0]), w))
	l := &s.lanes[min(s.lane, len(s.lanes)-1)]
	if g := s.under(l, a, z); g >= 0 {
		act := &t.GPU[g]
		name := act.Name
		if act.Kind == trace.Kernel {
			name = analyze.ShortKernelName(name)
		} else {
			name = act.Kind.String() + " " + act.Copy.String()
		}
		out = append(out, cut(fmt.Sprintf(" %s: %s at +%s  %s", l.label, act.Dur(), trace.Duration(act.Start-b.Start), sanitize(name)), w))
	} else {
		out = append(out, cut(fmt.Sprintf(" %s: idle", l.label), w))
	}
	return out
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

// stepMarks puts a "▼#N" where each step starts inside the window.
func (s *timelineScreen) stepMarks() string {
	t := s.d.t
	line := []rune(fit("  steps", laneLabelW) + " " + strings.Repeat(" ", s.cols))
	if len(t.Steps) == 0 || t.Steps[0].Synthetic {
		return strings.TrimRight(string(line), " ")
	}
	for _, st := range t.Steps {
		if st.Start < s.win.Start || st.Start >= s.win.End {
			continue
		}
		c := int(int64(st.Start-s.win.Start) * int64(s.cols) / int64(max(s.win.Dur(), 1)))
		for i, r := range []rune(fmt.Sprintf("▼#%d", st.Number)) {
			if p := laneLabelW + 1 + c + i; p < len(line) {
				line[p] = r
			}
		}
	}
	return strings.TrimRight(string(line), " ")
}

func (s *timelineScreen) hint() string {
	return "←→ cursor  h/l pan  +/- zoom  [ ] step  a all  ↑↓ stream"
}

func (s *timelineScreen) setFilter(string) bool { return false }
func (s *timelineScreen) back() bool            { return false }

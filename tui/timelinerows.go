package tui

import (
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// The timeline fills the screen: every lane gets a row, and the rows
// left over deepen the lanes, nesting lanes (ops, Python) first, one
// level of their call stacks per row, then GPU streams, whose busy
// fraction a taller bar shows finer.

// Row limits: how many rows a lane may take beyond its first.
const (
	maxLevelRows = 24 // a nesting lane's levels
	maxBarRows   = 4  // a GPU stream's bar
)

// heights gives each shown lane its rows, room in all: one each, then
// what is left shared out one row at a time.
func (s *timelineScreen) heights(room int) []int {
	hs := make([]int, len(s.shown))
	for i := range hs {
		hs[i] = 1
	}
	extra := room - len(hs)
	limit := func(l *lane) int {
		switch {
		case l.kind == laneOps:
			return min(l.maxDepth+1, maxLevelRows)
		case l.kind == lanePy:
			return min(l.maxDepth, maxLevelRows)
		}
		return 0
	}
	for _, pass := range []func(l *lane) int{limit, func(l *lane) int {
		if l.kind == laneGPU {
			return maxBarRows
		}
		return 0
	}} {
		for grew := true; grew && extra > 0; {
			grew = false
			for i, li := range s.shown {
				if l := &s.lanes[li]; extra > 0 && hs[i]-1 < pass(l) {
					hs[i]++
					extra--
					grew = true
				}
			}
		}
		// GPU bars take rows only once the nesting lanes have theirs.
	}
	return hs
}

// laneRows draws the lanes in room rows: all of them, deepened, when
// they fit; else one row each, scrolled so the selected lane shows.
func (s *timelineScreen) laneRows(room int, st *styles) []string {
	room = max(room, 1)
	s.lane = min(s.lane, len(s.shown)-1)
	hs := s.heights(room)
	first := 0
	if len(s.shown) > room && s.lane >= room {
		first = s.lane - room + 1
	}
	var out []string
	prevGroup := ""
	for li := first; li < len(s.shown) && len(out) < room; li++ {
		l := &s.lanes[s.shown[li]]
		mark, label := "  ", st.plain
		if li == s.lane {
			mark, label = "> ", st.header
		}
		name := l.label
		if l.group != "" {
			// The rank labels its group of lanes, once.
			g := strings.Repeat(" ", width(l.group))
			if l.group != prevGroup || li == first {
				g = l.group
			}
			name = g + " " + name
			prevGroup = l.group
		}
		for r := 0; r < hs[li] && len(out) < room; r++ {
			text := ""
			if r == 0 {
				text = mark + name
			}
			out = append(out, label.Render(fit(text, s.labelW))+"|"+s.laneCells(l, r, hs[li], st))
		}
	}
	return out
}

// laneCells draws row r of a lane drawn in rows rows.
func (s *timelineScreen) laneCells(l *lane, r, rows int, st *styles) string {
	switch {
	case l.spans():
		return s.spanCells(l, st)
	case l.kind == lanePy:
		return s.levelCells(l, r, st)
	case l.kind == laneOps && r > 0:
		return s.levelCells(l, r-1, st)
	case l.kind == laneGPU && rows > 1:
		return s.barCells(l, r, rows, st)
	}
	return s.densityCells(l, st)
}

// bars are the eighth blocks of a bar's top cell.
var bars = [...]string{" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"}

// barCells draws row r (0 at the top) of a GPU stream drawn as a bar
// chart rows high: each column's bar is its busy fraction of the rows,
// in eighths, coloured by the category of the kernel at its middle; a
// column with no activity at all has the idle mark on its bottom row.
func (s *timelineScreen) barCells(l *lane, r, rows int, st *styles) string {
	var sb strings.Builder
	prev := l.busyBefore(s.colStart(0))
	below := rows - 1 - r // rows under this one
	for c := 0; c < s.cols; c++ {
		a, z := s.colStart(c), s.colStart(c+1)
		next := l.busyBefore(z)
		f := float64(next-prev) / float64(max(z-a, 1))
		prev = next
		switch {
		case f <= 0 && below == 0:
			sb.WriteString(st.idleLane.Render(idleMark))
		case f <= 0:
			sb.WriteByte(' ')
		default:
			eighths := max(int(f*float64(rows*8)+0.5), 1) - below*8
			cell := bars[min(max(eighths, 0), 8)]
			if cat := s.gpuCategory(l, a, z); cat != "\x00lane" && cell != " " {
				cell = st.category(cat).Render(cell)
			} else if cell != " " {
				cell = l.style(st).Render(cell)
			}
			sb.WriteString(cell)
		}
	}
	return strings.TrimRight(sb.String(), " ")
}

// levelCells draws a nesting lane like a flame graph at the window's
// level of detail: at level 0 each column shows the outermost item under
// it shorter than a quarter of the window (frames longer than that, the
// script or the training loop, would draw one bar across the lane; the
// readout names them), at level k the item k calls inside that one;
// each is named where it changes.
func (s *timelineScreen) levelCells(l *lane, level int, st *styles) string {
	var b strings.Builder
	limit := s.win.Dur() / 4
	prevName, pos := "", 0
	var label []rune
	var path []int
	for c := 0; c < s.cols; c++ {
		a := s.colStart(c)
		i := l.cover(a + (s.colStart(c+1)-a)/2)
		path = path[:0]
		for ; i >= 0; i = s.parentWithin(l, i, limit) {
			path = append(path, i)
		}
		if k := len(path) - 1 - level; k >= 0 {
			i = path[k]
		} else {
			i = -1
		}
		if i < 0 {
			b.WriteByte(' ')
			prevName = ""
			continue
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

// parentWithin is item i's parent when it is shorter than limit, else -1.
func (s *timelineScreen) parentWithin(l *lane, i int, limit trace.Duration) int {
	if l.parent == nil {
		return -1
	}
	if p := l.parent(i); p >= 0 && p < i && trace.Duration(l.end(p)-l.start(p)) < limit {
		return p
	}
	return -1
}

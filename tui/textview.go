package tui

// textView is a scrollable block of text (detail views). Its lines are
// built for a width and rebuilt only when the width changes.
type textView struct {
	build  func(w int) []string
	lines  []string
	builtW int
	top    int
	height int
}

func newTextView(build func(w int) []string) *textView {
	return &textView{build: build, builtW: -1, height: 10}
}

func (v *textView) home()        { v.top = 0 }
func (v *textView) end()         { v.top = len(v.lines); v.clamp() }
func (v *textView) page() int    { return max(v.height-1, 1) }
func (v *textView) scroll(d int) { v.move(d) }

func (v *textView) move(d int) {
	v.top += d
	v.clamp()
}

func (v *textView) clamp() {
	v.top = min(v.top, len(v.lines)-v.height)
	v.top = max(v.top, 0)
}

func (v *textView) render(w, h int, st *styles) []string {
	if w != v.builtW {
		v.lines = v.build(w - 2)
		v.builtW = w
	}
	v.height = h
	v.clamp()
	out := make([]string, 0, h)
	for i := v.top; i < len(v.lines) && len(out) < h; i++ {
		l := cut(" "+v.lines[i], w)
		if v.heading(i) {
			l = st.title.Render(l)
		}
		out = append(out, l)
	}
	if len(v.lines) > h && len(out) == h {
		// Say there is more, on the last line, rather than hide it.
		out[h-1] = st.dim.Render(cut(" … more below (↓ PgDn)", w))
		if v.top+h >= len(v.lines) {
			out[h-1] = cut(" "+v.lines[len(v.lines)-1], w)
		}
	}
	return out
}

// heading reports whether line i titles a section: unindented text after
// an empty line (Duration histogram, Launches per step, ...).
func (v *textView) heading(i int) bool {
	l := v.lines[i]
	return i > 0 && v.lines[i-1] == "" && l != "" && l[0] != ' '
}

func (v *textView) position() string {
	if len(v.lines) <= v.height {
		return ""
	}
	return "line " + itoa(v.top+1) + "/" + itoa(len(v.lines))
}

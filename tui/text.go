package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/tracelens/tracelens/termtext"
)

// sanitize makes a name from the trace safe to print (termtext.Sanitize,
// the project's one sanitizer): trace files are untrusted input and
// terminals obey what they are sent.
func sanitize(s string) string { return termtext.Sanitize(s) }

// width is the number of terminal cells s takes.
func width(s string) int { return ansi.StringWidth(s) }

// fit pads or cuts s (already sanitised, no escapes) to exactly w cells,
// cutting the middle so both ends of a long C++ name stay visible.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := width(s)
	if n <= w {
		return s + strings.Repeat(" ", w-n)
	}
	if w < 8 {
		return ansi.Truncate(s, w, "")
	}
	head := (w - 1) / 2
	tail := w - 1 - head
	out := ansi.Truncate(s, head, "") + "…" + ansi.TruncateLeft(s, n-tail, "")
	if d := w - width(out); d > 0 {
		out += strings.Repeat(" ", d)
	}
	return out
}

// cut truncates s to at most w cells, marking the cut with an ellipsis.
func cut(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if width(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// padLeft right-aligns s in w cells (cutting it when too long).
func padLeft(s string, w int) string {
	n := width(s)
	if n >= w {
		return cut(s, w)
	}
	return strings.Repeat(" ", w-n) + s
}

// wrap breaks s into lines of at most w cells, preferring spaces and
// commas, for full kernel names and finding text in detail views.
func wrap(s string, w int) []string {
	if w < 4 {
		w = 4
	}
	var lines []string
	for _, para := range strings.Split(s, "\n") {
		for width(para) > w {
			cutAt := ansi.Truncate(para, w, "")
			if i := strings.LastIndexAny(cutAt, " ,"); i > len(cutAt)/2 {
				cutAt = cutAt[:i+1]
			}
			lines = append(lines, strings.TrimRight(cutAt, " "))
			para = strings.TrimLeft(para[len(cutAt):], " ")
		}
		lines = append(lines, para)
	}
	return lines
}

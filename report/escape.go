package report

import (
	"strings"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/termtext"
)

// sanitize makes a trace string safe to place on one Markdown line: invalid
// UTF-8 becomes U+FFFD, and control characters (newlines, tabs, ESC of ANSI
// colour sequences, C1 controls) and bidirectional overrides become their
// visible Unicode "control picture" (␛, ␊) or U+FFFD, so a hostile name can
// neither end a table row nor restyle a terminal, yet stays recognisable.
func sanitize(s string) string { return termtext.Sanitize(s) }

// Text escapes s for use as inline Markdown text: after sanitize, every
// character that could start emphasis, a link, an autolink, raw HTML, an
// entity or a code span is backslash-escaped. Pipes are left to the table
// writer, which escapes them in every cell.
func Text(s string) string {
	s = sanitize(s)
	www := strings.Contains(strings.ToLower(s), "www.")
	if !www && !strings.ContainsAny(s, "\\`*_[]<>&~!#") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '&', '~', '!', '#':
			b.WriteByte('\\')
		case '.':
			// GFM turns a bare "www.host" into a link: an escaped dot
			// is no longer one.
			if www && i >= 3 && strings.EqualFold(s[i-3:i], "www") {
				b.WriteByte('\\')
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Code returns s as a Markdown code span, the way the report shows every
// name from a trace: nothing inside a code span is interpreted (no
// emphasis, HTML, entities or autolinks), and the fence is one backtick
// longer than the longest backtick run inside, so backticks in a name
// cannot close it. An empty name is shown as an em dash.
func Code(s string) string {
	s = sanitize(s)
	if s == "" {
		return "—"
	}
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	// A leading or trailing backtick would merge with the fence, and a
	// space at both ends would be stripped: pad so CommonMark strips only
	// the padding.
	if s[0] == '`' || s[len(s)-1] == '`' || (s[0] == ' ' && s[len(s)-1] == ' ' && strings.Trim(s, " ") != "") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// shorten cuts s to at most width runes, keeping its head and tail (the
// namespace and the distinguishing template arguments of a C++ name) around
// an ellipsis.
func shorten(s string, width int) string { return analyze.ClipName(s, width) }

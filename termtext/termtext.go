// Package termtext makes trace-supplied text safe to print on a terminal.
//
// Names in a trace (kernels, ops, threads, the file name itself) come from
// whoever wrote the file. Printed raw, an ESC byte starts an ANSI sequence
// that can recolour, move the cursor, retitle the window or hide what
// follows; a carriage return or a bidirectional override makes the line
// read differently from its bytes. Every plain-text writer passes such
// strings through Sanitize.
package termtext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sanitize returns s with everything that could act on a terminal made
// visible instead: invalid UTF-8 becomes U+FFFD, C0 controls and DEL become
// their Unicode control pictures (ESC shows as ␛, newline as ␊), and C1
// controls and bidirectional overrides become U+FFFD. The text stays
// recognisable and on one line. Clean strings are returned unchanged
// without allocating.
func Sanitize(s string) string {
	if clean(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		switch {
		case r < 0x20:
			b.WriteRune(0x2400 + r) // ␀..␟
		case r == 0x7f:
			b.WriteRune('\u2421') // ␡
		case unicode.IsControl(r), isBidiControl(r):
			b.WriteRune('\uFFFD')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// clean reports whether s needs no change; ASCII strings, nearly all of a
// trace's names, are checked one byte at a time.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f {
			return false
		}
		if c >= 0x80 {
			if !utf8.ValidString(s[i:]) {
				return false
			}
			for _, r := range s[i:] {
				if unicode.IsControl(r) || isBidiControl(r) {
					return false
				}
			}
			return true
		}
	}
	return true
}

// isBidiControl reports the embedding, override, isolate and mark
// characters that make displayed text read differently from its bytes.
func isBidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 || r == 0x200E || r == 0x200F
}

// Package jsonout writes the JSON every face prints: indented by two
// spaces, with kernel names' < > & kept as they are, one value per call
// followed by a newline. The output is byte for byte what
// encoding/json's Encoder writes with SetEscapeHTML(false) and
// SetIndent("", "  "); the indenting is one pass over the compact
// encoding instead of the Encoder's re-scan with its full JSON state
// machine, which took most of the time `report --format json` spent
// writing a 14 MB report of a 2,205-step trace.
package jsonout

import (
	"bytes"
	"encoding/json"
	"io"
)

// Write encodes v to w as described in the package doc.
func Write(w io.Writer, v any) error {
	var compact bytes.Buffer
	enc := json.NewEncoder(&compact)
	enc.SetEscapeHTML(false) // kernel names keep their < > &
	if err := enc.Encode(v); err != nil {
		return err
	}
	out := appendIndented(make([]byte, 0, compact.Len()*3/2), compact.Bytes())
	_, err := w.Write(append(out, '\n'))
	return err
}

// appendIndented appends src, compact JSON from encoding/json (no
// whitespace outside strings but a trailing newline), indented as
// json.Indent does with no prefix and two spaces: a newline and the
// depth's indent after each opening bracket and comma and before each
// closing bracket, "{}" and "[]" for empty ones, a space after each colon.
func appendIndented(dst, src []byte) []byte {
	depth := 0
	open := false // an opening bracket waits for its first value
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		if open && c != '}' && c != ']' {
			open = false
			depth++
			dst = newline(dst, depth)
		}
		switch c {
		case '"':
			end := stringEnd(src, i)
			dst = append(dst, src[i:end]...)
			i = end - 1
		case '{', '[':
			open = true
			dst = append(dst, c)
		case ',':
			dst = newline(append(dst, c), depth)
		case ':':
			dst = append(dst, c, ' ')
		case '}', ']':
			if open {
				open = false
			} else {
				depth--
				dst = newline(dst, depth)
			}
			dst = append(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// stringEnd returns the index just past the string starting with the
// quote at src[i]: the first quote after it not escaped by an odd run of
// backslashes (len(src) if none).
func stringEnd(src []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(src[j:], '"')
		if k < 0 {
			return len(src)
		}
		q := j + k
		slashes := 0
		for b := q - 1; b > i && src[b] == '\\'; b-- {
			slashes++
		}
		if slashes%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

// newline appends a newline and depth levels of two-space indent.
func newline(dst []byte, depth int) []byte {
	dst = append(dst, '\n')
	for range depth {
		dst = append(dst, ' ', ' ')
	}
	return dst
}

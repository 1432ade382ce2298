// Package jsonout writes the JSON every face prints: indented by two
// spaces, with kernel names' < > & kept as they are, one value per call
// followed by a newline. The output is byte for byte what
// encoding/json's Encoder writes with SetEscapeHTML(false) and
// SetIndent("", "  "). It is written straight into its indented form,
// type by type (codec.go), in pieces side by side (plan.go): the
// Encoder's reflection per value, then its re-scan of the compact text
// to indent it, took most of the time `report --format json` spent
// writing a 17 MB report of a 2,755-step trace, on one thread after the
// analysis. Values only encoding/json knows how to write (marshallers,
// maps, interfaces) are encoded by it and indented in place.
package jsonout

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"reflect"
	"runtime"
)

// Write encodes v to w as described in the package doc. Nothing is
// written unless the whole value encodes; where it does not (a NaN, a
// marshaller's error), the error is encoding/json's.
func Write(w io.Writer, v any) error {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return writeWhole(w, v)
	}
	cs := codecs{}
	c := cs.of(rv.Type())
	threads := runtime.GOMAXPROCS(0)
	buf, isBuf := w.(*bytes.Buffer)
	most := math.MaxInt
	if !isBuf {
		// Streamed: pieces small enough to hold a few at a time.
		most = streamWeight
	}
	pieces, tail, err := cut(c, rv, threads, most)
	switch {
	case err != nil:
		return writeWhole(w, v)
	case isBuf && len(pieces) <= 1:
		// Into a buffer (what the faces hand in), a value on one
		// thread is written in place, not built beside it and copied.
		return writeInPlace(buf, pieces, tail, v)
	case len(pieces) > 1 && !isBuf:
		cs.settle()
		if checkPieces(pieces) != nil {
			return writeWhole(w, v)
		}
		return stream(w, pieces, tail)
	}
	if encodePieces(pieces) != nil {
		return writeWhole(w, v)
	}
	if isBuf {
		n := len(tail)
		for _, p := range pieces {
			n += len(p.out)
		}
		buf.Grow(n)
	}
	for _, p := range pieces {
		if _, err := w.Write(p.out); err != nil {
			return err
		}
	}
	_, err = w.Write(tail)
	return err
}

// writeInPlace writes at most one piece and the tail into buf's free
// space.
func writeInPlace(buf *bytes.Buffer, pieces []*piece, tail []byte, v any) error {
	n := len(tail)
	for _, p := range pieces {
		n += len(p.prefix) + p.weight*bytesPerWeight
	}
	buf.Grow(n)
	out := buf.AvailableBuffer()
	for _, p := range pieces {
		if p.encode(out); p.err != nil {
			return writeWhole(buf, v)
		}
		out = p.out
	}
	_, err := buf.Write(append(out, tail...))
	return err
}

// writeWhole is Write without splitting v.
func writeWhole(w io.Writer, v any) error {
	compact, err := encodeCompact(v)
	if err != nil {
		return err
	}
	return writeIndented(w, len(compact), func(out []byte) []byte {
		out, _ = appendIndented(out, compact, 0)
		return out
	})
}

// encodeCompact is v as encoding/json's Encoder writes it with
// SetEscapeHTML(false) (kernel names keep their < > &): compact, with a
// trailing newline.
func encodeCompact(v any) ([]byte, error) {
	var compact bytes.Buffer
	enc := json.NewEncoder(&compact)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return compact.Bytes(), nil
}

// writeIndented writes to w what fill appends, indented JSON of n bytes
// of compact JSON, and a newline.
func writeIndented(w io.Writer, n int, fill func(out []byte) []byte) error {
	// The indented text runs to about 2.2 times the compact (a report's
	// nesting is deep); sized for it, it is not regrown and copied as it
	// is written. Into a buffer (what the faces hand in) it is indented
	// in place, not built beside it and copied over.
	size := n * 5 / 2
	var out []byte
	buf, inPlace := w.(*bytes.Buffer)
	if inPlace {
		buf.Grow(size)
		out = buf.AvailableBuffer()
	} else {
		out = make([]byte, 0, size)
	}
	out = append(fill(out), '\n')
	_, err := w.Write(out)
	return err
}

// appendIndented appends src, compact JSON from encoding/json (no
// whitespace outside strings but a trailing newline), indented as
// json.Indent does with no prefix and two spaces: a newline and the
// depth's indent after each opening bracket and comma and before each
// closing bracket, "{}" and "[]" for empty ones, a space after each colon.
// src may be a piece of a larger text cut after a whole value, depth
// that text's nesting at the cut; it returns the nesting at src's end.
func appendIndented(dst, src []byte, depth int) ([]byte, int) {
	open := false // an opening bracket waits for its first value
	for i := 0; i < len(src); {
		c := src[i]
		if space(c) {
			i++
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
			i = end
			continue
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
			// A number or a literal: copied whole, not byte by byte.
			end := i + 1
			for end < len(src) && plain(src[end]) {
				end++
			}
			dst = append(dst, src[i:end]...)
			i = end
			continue
		}
		i++
	}
	return dst, depth
}

// space reports whether c is JSON whitespace.
func space(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// plain reports whether c continues a number or a literal (true, false,
// null): a digit, a sign, a point, an exponent or a lower-case letter.
// The range checks run at every byte of every number.
func plain(c byte) bool {
	return c-'-' <= '9'-'-' || c-'a' <= 'z'-'a' || c == '+' || c == 'E'
}

// stringEnd returns the index just past the string starting with the
// quote at src[i]: the first quote after it that no backslash escapes
// (len(src) if none). A byte loop: most strings are a key's few bytes,
// shorter than a search's setup.
func stringEnd(src []byte, i int) int {
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++ // the escaped byte; \uXXXX's digits hold no quote
		case '"':
			return j + 1
		}
	}
	return len(src)
}

// indent is a newline and the spaces of the deepest indent newline
// appends in one copy; deeper ones take more.
const indent = "\n                                                                "

// newline appends a newline and depth levels of two-space indent.
func newline(dst []byte, depth int) []byte {
	if n := 1 + 2*depth; n <= len(indent) {
		return append(dst, indent[:n]...)
	}
	dst = append(dst, indent...)
	for range depth - (len(indent)-1)/2 {
		dst = append(dst, ' ', ' ')
	}
	return dst
}

package ingest

import (
	"bytes"
	"errors"
	"fmt"
)

// The scanner finds the boundaries of JSON values without decoding them.
// It is the only code that looks at every byte serially, so it does as
// little as possible: outside strings a table lookup per byte, inside
// strings a vectorised search for the closing quote. It still rejects what
// gjson would silently misread (stray characters, mismatched brackets,
// runaway nesting), so malformed input fails with a byte offset instead of
// producing a wrong answer.

const (
	// maxDepth bounds nesting; real traces nest at most ~5 levels.
	maxDepth = 256
	// chunkSize is the read buffer, also the unit of work handed to a
	// parsing worker. Big enough to amortise hand-off, small enough that a
	// few in flight stay far below the file size.
	chunkSize = 4 << 20
)

// byte classes outside strings
const (
	clsBad = iota
	clsSpace
	clsOpen
	clsClose
	clsQuote
	clsScalar // digits, sign, '.', 'e', literal letters, ':' and ','
)

var classes = func() (t [256]uint8) {
	for _, c := range " \t\r\n" {
		t[c] = clsSpace
	}
	t['{'], t['['] = clsOpen, clsOpen
	t['}'], t[']'] = clsClose, clsClose
	t['"'] = clsQuote
	for _, c := range "0123456789+-.eE:,truefalsn" {
		t[c] = clsScalar
	}
	return t
}()

var errNeedMore = errors.New("need more input")

// scanError is a scanner failure at a position within the current buffer.
type scanError struct {
	pos int
	msg string
}

func (e *scanError) Error() string { return e.msg }

// scanValue returns the end (exclusive) of the JSON value starting at b[i]
// (which must not be whitespace). It returns errNeedMore when b ends before
// the value does.
func scanValue(b []byte, i int) (int, error) {
	return scanValueDepth(b, i, maxDepth)
}

// scanValueDepth is scanValue with nesting bounded by limit (≤ maxDepth).
func scanValueDepth(b []byte, i, limit int) (int, error) {
	var stack [maxDepth]byte
	depth := 0
	n := len(b)
	for i < n {
		c := b[i]
		switch classes[c] {
		case clsSpace, clsScalar:
			if depth == 0 {
				// A top-level scalar: ends at the first delimiter.
				j := i
				for j < n && classes[b[j]] == clsScalar && b[j] != ',' && b[j] != ':' {
					j++
				}
				if j == n {
					return 0, errNeedMore
				}
				if j == i {
					return 0, &scanError{i, fmt.Sprintf("unexpected character %q", c)}
				}
				return j, nil
			}
			i++
		case clsQuote:
			j, err := scanString(b, i)
			if err != nil {
				return 0, err
			}
			i = j
			if depth == 0 {
				return i, nil
			}
		case clsOpen:
			if depth == limit {
				return 0, &scanError{i, fmt.Sprintf("nesting deeper than %d levels", limit)}
			}
			stack[depth] = c
			depth++
			i++
		case clsClose:
			if depth == 0 {
				return 0, &scanError{i, fmt.Sprintf("unexpected %q", c)}
			}
			depth--
			if open := stack[depth]; (open == '{') != (c == '}') {
				return 0, &scanError{i, fmt.Sprintf("%q closed by %q", open, c)}
			}
			i++
			if depth == 0 {
				return i, nil
			}
		default:
			return 0, &scanError{i, fmt.Sprintf("unexpected character %q", c)}
		}
	}
	return 0, errNeedMore
}

// scanString returns the index just past the string starting at b[i] == '"'.
func scanString(b []byte, i int) (int, error) {
	j := i + 1
	// Most strings in a trace are short keys ("ph", "ts", "args"): a plain
	// loop beats a vectorised search's call overhead for the first bytes.
	for end := min(j+16, len(b)); j < end; {
		switch b[j] {
		case '"':
			return j + 1, nil
		case '\\':
			j += 2 // the escaped byte cannot end the string
		default:
			j++
		}
	}
	if j >= len(b) {
		return 0, errNeedMore
	}
	// Longer strings: the backslash count before a quote decides, which
	// holds wherever the search started.
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, errNeedMore
		}
		j += k
		// An odd run of backslashes before the quote escapes it.
		bs := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			bs++
		}
		if bs%2 == 0 {
			return j + 1, nil
		}
		j++
	}
}

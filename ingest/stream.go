package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// errStopped ends the scan when the reader no longer wants events.
var errStopped = errors.New("reading stopped")

// streamer walks the top level of a trace, keeping small top-level values
// and cutting the event array into batches.
type streamer struct {
	r          io.Reader
	buf        []byte
	pos, n     int
	base       int64 // absolute offset of buf[0]
	eof        bool
	compressed bool
	free       chan []byte // recycled buffers, bounded
	chunk      int         // buffer size
	seq        int
	// emit receives each batch of events; it blocks while workers are busy,
	// which is what bounds memory. It returns false when the reader has
	// stopped wanting events (the model passed its memory budget).
	emit func(*batch) bool
	// top holds raw top-level values other than traceEvents (copied).
	top map[string][]byte
	// sawEvents reports whether an event array was found.
	sawEvents bool
	// arrayForm is set when the file is a bare event array (Chrome's
	// "JSON Array Format"), whose writer may have died before the ']'.
	arrayForm bool
	// unclosed reports that the array form ended after a whole event
	// without its ']'; the events read are kept, as Chrome's importer does.
	unclosed bool
	// rescanned counts bytes scanned again because a value was unfinished
	// when the buffer ended; tests hold it linear in the input.
	rescanned int64
	// speculate lets the scanner cut batches without scanning them.
	speculate bool
	// seps are the separators speculativeCut cuts at: Kineto's, and the
	// one this file uses between its first two events (learnSeparator).
	seps [][]byte
	// learned is set once learnSeparator has looked at a pair of events.
	learned bool
	// clock times reading and waiting for workers (nil: not timed).
	clock *stageClock
	// direct, when set, lets workers read batches themselves (see
	// regions); directOK is set while the last speculative cut succeeded,
	// and window is regionCut's buffer.
	direct   *direct
	directOK bool
	window   []byte
	// maxBuf caps the buffer, in bytes (0: no cap): it grows only for a
	// value longer than itself, so this is what bounds the memory one
	// JSON value (a 10 GiB kernel name in a 10 MB gzip, an endless string
	// on a pipe) can take while it is scanned. budget is the memory
	// budget it was derived from, for the error.
	maxBuf int64
	budget int64
}

// maxValueShare is the share of the memory budget one JSON value may take
// while scanned: growing the buffer holds the old and the new one at once,
// and the worker that parses the value copies its strings again.
const maxValueShare = 4

func (s *streamer) errAt(pos int, msg string) error {
	return &SyntaxError{Offset: s.base + int64(pos), Msg: msg, Compressed: s.compressed}
}

// more reads input after buf[pos:n], moving the unread tail to the front
// (growing the buffer when one value is larger than it). It fills the
// buffer rather than returning after one short read: callers rescan an
// unfinished value from its start after each call, so with gzip's or a
// pipe's 32-64 KiB reads a 256 MB string would be rescanned thousands of
// times (quadratic); filling, with the buffer doubling, bounds the rescans
// of any value to about twice its size.
func (s *streamer) more() error {
	if s.eof {
		return io.ErrUnexpectedEOF
	}
	tail := s.n - s.pos
	if s.pos > 0 {
		copy(s.buf, s.buf[s.pos:s.n])
		s.base += int64(s.pos)
		s.pos, s.n = 0, tail
	}
	if s.n == len(s.buf) {
		if s.maxBuf > 0 && 2*int64(len(s.buf)) > s.maxBuf {
			return &BudgetError{Budget: s.budget, Value: int64(s.n), Offset: s.base, Compressed: s.compressed}
		}
		nb := make([]byte, 2*len(s.buf))
		copy(nb, s.buf[:s.n])
		s.buf = nb
	}
	start := s.n
	defer s.clock.add("scan: read input", s.clock.now())
	for s.n < len(s.buf) {
		m, err := s.r.Read(s.buf[s.n:])
		s.n += m
		if err == io.EOF {
			s.eof = true
			break
		}
		if err != nil {
			return err
		}
	}
	if s.n == start {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// skipSpace advances past whitespace, reading more as needed. It returns
// false at end of input.
func (s *streamer) skipSpace() (bool, error) {
	for {
		for s.pos < s.n && classes[s.buf[s.pos]] == clsSpace {
			s.pos++
		}
		if s.pos < s.n {
			return true, nil
		}
		if err := s.more(); err != nil {
			if err == io.ErrUnexpectedEOF {
				return false, nil
			}
			return false, err
		}
	}
}

// value scans one complete value at pos and returns its bounds in buf.
func (s *streamer) value() (int, int, error) {
	for {
		end, err := scanValue(s.buf[:s.n], s.pos)
		if err == nil {
			start := s.pos
			s.pos = end
			return start, end, nil
		}
		var se *scanError
		if errors.As(err, &se) {
			return 0, 0, s.errAt(se.pos, se.msg)
		}
		s.rescanned += int64(s.n - s.pos)
		if err := s.more(); err != nil {
			if err == io.ErrUnexpectedEOF {
				return 0, 0, s.errAt(s.n, "unexpected end of input")
			}
			return 0, 0, err
		}
	}
}

func (s *streamer) expect(what string) (byte, error) {
	ok, err := s.skipSpace()
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, s.errAt(s.n, "unexpected end of input, expected "+what)
	}
	return s.buf[s.pos], nil
}

// run reads the whole input.
func (s *streamer) run() error {
	s.buf = make([]byte, s.chunk)
	// Skip a UTF-8 byte order mark, which some Windows tools write.
	if err := s.more(); err != nil {
		if err == io.ErrUnexpectedEOF {
			return &FormatError{Msg: "empty file"}
		}
		return err
	}
	if bytes.HasPrefix(s.buf[:s.n], []byte("\xef\xbb\xbf")) {
		s.pos = 3
	}
	if s.base == 0 {
		if msg := sniffContainer(s.buf[:s.n]); msg != "" {
			return &FormatError{Msg: msg}
		}
	}
	c, err := s.expect("a JSON object or array")
	if err != nil {
		return err
	}
	switch c {
	case '[':
		s.pos++
		s.arrayForm = true
		if err := s.events(); err != nil {
			return err
		}
	case '{':
		s.pos++
		if err := s.object(); err != nil {
			return err
		}
	default:
		return s.errAt(s.pos, fmt.Sprintf("expected a JSON object or array, found %q", c))
	}
	ok, err := s.skipSpace()
	if err != nil {
		return err
	}
	if ok {
		return s.errAt(s.pos, "unexpected data after the top-level value")
	}
	return nil
}

// object reads the top-level object's members.
func (s *streamer) object() error {
	s.top = map[string][]byte{}
	first := true
	for {
		c, err := s.expect(`'"' or '}'`)
		if err != nil {
			return err
		}
		if c == '}' {
			s.pos++
			return nil
		}
		if !first {
			if c != ',' {
				return s.errAt(s.pos, fmt.Sprintf("expected ',' or '}' after object member, found %q", c))
			}
			s.pos++
			if c, err = s.expect("a member name"); err != nil {
				return err
			}
		}
		first = false
		if c != '"' {
			return s.errAt(s.pos, fmt.Sprintf("expected a member name, found %q", c))
		}
		ks, ke, err := s.value()
		if err != nil {
			return err
		}
		key := string(s.buf[ks+1 : ke-1])
		if c, err = s.expect("':'"); err != nil {
			return err
		}
		if c != ':' {
			return s.errAt(s.pos, fmt.Sprintf("expected ':' after member name, found %q", c))
		}
		s.pos++
		if c, err = s.expect("a value"); err != nil {
			return err
		}
		if key == "traceEvents" {
			if c != '[' {
				return &FormatError{Msg: fmt.Sprintf("traceEvents at byte %d is not an array", s.base+int64(s.pos))}
			}
			s.pos++
			if err := s.events(); err != nil {
				return err
			}
			continue
		}
		vs, ve, err := s.value()
		if err != nil {
			return err
		}
		s.top[key] = bytes.Clone(s.buf[vs:ve])
	}
}

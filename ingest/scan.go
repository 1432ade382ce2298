package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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

// errStopped ends the scan when the reader no longer wants events.
var errStopped = errors.New("reading stopped")

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

// batch is a run of complete events handed to a parsing worker. The worker
// owns buf until it sends its result; nothing keeps buf afterwards.
type batch struct {
	seq   int
	buf   []byte
	spans []int32 // start,end pairs into buf
	base  int64   // absolute offset of buf[0] in the JSON text
	// cutStart and cutEnd, when spans is nil, bound events the scanner
	// did not scan: the worker finds them (cutEvents).
	cutStart, cutEnd int32
	// src, when set, is where the worker reads the batch itself: the
	// region bytes at base, which end at a speculative cut (see direct).
	// buf is nil then, and cutEnd is the batch size, the most a region
	// can be.
	src    io.ReaderAt
	region int32
}

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

// events reads the event array after its '[' and hands out batches.
func (s *streamer) events() error {
	s.sawEvents = true
	if s.seps == nil {
		s.seps = [][]byte{[]byte(kinetoSep)}
	}
	// Each batch's boundary list starts at the size of the last one.
	a := eventArray{spans: make([]int32, 0, 4096), first: true, lastEnd: -1}
	for {
		done, inEvent, err := s.scanBuffered(&a)
		if done || err != nil {
			return err
		}
		if err := s.flush(&a); err != nil {
			return err
		}
		a.lastEnd = -1 // more moves the buffer's contents
		if err := s.more(); err != nil {
			if err == io.ErrUnexpectedEOF {
				return s.endWithoutBracket(inEvent, a.first)
			}
			return err
		}
	}
}

// eventArray is where events is in the event array: the spans of the
// batch being gathered, whether no event has been read yet, and the end
// of the event just scanned in this buffer (-1: none), from which the
// scanner learns the file's event separator.
type eventArray struct {
	spans   []int32
	first   bool
	lastEnd int
}

// scanBuffered scans as many events as the buffer holds into a's batch,
// or cuts them speculatively into batches of their own. done: the array's
// ']' was reached and the last batch sent. inEvent: the buffer ends inside
// an event (rather than between events), where end of input is truncation
// in any form.
func (s *streamer) scanBuffered(a *eventArray) (done, inEvent bool, err error) {
	for {
		for s.pos < s.n && classes[s.buf[s.pos]] == clsSpace {
			s.pos++
		}
		if s.pos >= s.n {
			return false, false, nil
		}
		c := s.buf[s.pos]
		if c == ']' {
			s.pos++
			return true, false, s.flush(a)
		}
		// p is the event's first byte; s.pos stays on the comma until
		// the whole event is in the buffer, so a refill resumes there.
		p := s.pos
		if !a.first {
			p++
			for p < s.n && classes[s.buf[p]] == clsSpace {
				p++
			}
			if c != ',' || p < s.n && s.buf[p] == ']' {
				return false, false, s.commaError(c, p)
			}
			if p >= s.n {
				return false, false, nil
			}
		}
		if s.speculate && len(a.spans) == 0 {
			cut, err := s.cutAhead(a, p)
			if err != nil {
				return false, false, err
			}
			if cut {
				continue
			}
		}
		if s.speculate && !a.first && a.lastEnd > 0 {
			s.learnSeparator(a.lastEnd, p)
		}
		a.lastEnd = -1
		end, err := scanValue(s.buf[:s.n], p)
		if err == errNeedMore {
			s.rescanned += int64(s.n - p)
			return false, true, nil
		}
		if err != nil {
			se := err.(*scanError)
			return false, false, s.errAt(se.pos, se.msg)
		}
		if s.n > 1<<31-1 {
			return false, false, s.errAt(p, "event larger than 2 GiB")
		}
		a.spans = append(a.spans, int32(p), int32(end))
		s.pos = end
		a.lastEnd = end
		a.first = false
	}
}

// commaError is the error for a bad separator between events: c, at
// s.pos, is not a comma, or the comma is followed by the array's end at
// p. It is kept out of scanBuffered's loop, which runs once an event.
func (s *streamer) commaError(c byte, p int) error {
	if c != ',' {
		return s.errAt(s.pos, fmt.Sprintf("expected ',' or ']' in traceEvents, found %q", c))
	}
	return s.errAt(p, "trailing comma in traceEvents")
}

// cutAhead, at the start of a batch (event p), lets the workers read the
// rest of the input themselves where they can (regions), else hands the
// buffer's events to a worker unscanned, cut where Kineto's layout says
// an event ends; the worker checks the cut (see cutEvents). cut reports
// that the scan goes on from a new position.
func (s *streamer) cutAhead(a *eventArray, p int) (cut bool, err error) {
	if s.directOK && !s.eof {
		moved, err := s.regions(p)
		if err != nil {
			return false, err
		}
		s.directOK = false
		if moved {
			a.lastEnd = -1
			return true, nil // the buffer is empty: read on from the last cut
		}
	}
	end := speculativeCut(s.buf[:s.n], p, s.seps)
	if end <= 0 {
		return false, nil
	}
	s.pos = end
	if err := s.send(&batch{cutStart: int32(p), cutEnd: int32(end)}, a); err != nil {
		return false, err
	}
	a.first = false // s.pos is on the comma after the cut
	s.directOK = s.direct != nil
	return true, nil
}

// flush sends a's gathered events as a batch, if any, and starts the
// next batch's spans at about the same size.
func (s *streamer) flush(a *eventArray) error {
	if len(a.spans) == 0 {
		return nil
	}
	if err := s.send(&batch{spans: a.spans}, a); err != nil {
		return err
	}
	a.spans = make([]int32, 0, len(a.spans)+len(a.spans)/8)
	return nil
}

// send hands b, which owns s.buf, to a worker and moves the unread tail
// into a fresh buffer.
func (s *streamer) send(b *batch, a *eventArray) error {
	b.seq, b.buf, b.base = s.seq, s.buf, s.base
	s.seq++
	t := s.clock.now()
	if !s.emit(b) {
		return errStopped
	}
	s.clock.add("scan: wait for a worker", t)
	if b.seq == 0 {
		s.clock.mark("first batch")
	}
	// The worker owns the old buffer now: continue in a fresh one.
	var nb []byte
	select {
	case nb = <-s.free:
	default:
		nb = make([]byte, s.chunk)
		s.clock.count("scan: new buffers")
	}
	tail := s.n - s.pos
	if tail > len(nb) {
		nb = make([]byte, 2*tail)
	}
	copy(nb, s.buf[s.pos:s.n])
	s.base += int64(s.pos)
	s.buf, s.pos, s.n = nb, 0, tail
	a.lastEnd = -1
	return nil
}

// endWithoutBracket is how an event array that the input ends inside
// ends: Chrome's importer closes a bare array after a whole event itself
// (a trailing comma included), since a crashed writer's events are still
// worth reading; anything else is truncation.
func (s *streamer) endWithoutBracket(inEvent, first bool) error {
	if s.arrayForm && !inEvent && !first {
		s.unclosed = true
		s.pos = s.n
		return nil
	}
	return s.errAt(s.n, "unexpected end of input inside traceEvents")
}

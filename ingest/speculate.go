package ingest

import (
	"bytes"
	"errors"
)

// The speculative split takes the serial scan off the critical path for
// traces in Kineto's layout, where every event begins on a line "  {" and
// ends on a line "  }". A raw newline cannot occur inside a JSON string, so
// the separator "\n  },\n  {" lies between values; the scanner cuts each
// buffer at its last separator and hands the part before it to a worker
// unscanned. The worker reads the part event by event (in parallel with
// the others), checking each as the scanner would while it reads its
// fields, so each byte is walked once (see cutEvents), and checks that its
// last event ends exactly at the cut.
// Batch 0 starts at a true event start, and a batch whose scan from a true
// start ends exactly at its cut makes the next batch's start true, so when
// every batch checks out, the events are exactly those a serial scan finds.
// A batch that does not (a separator inside a nested value, or invalid
// JSON) fails the read with errMiss, and the reader starts over with the
// serial scan, which also finds any syntax error at its exact offset.

// kinetoSep is the text between two events in Kineto's layout.
const kinetoSep = "\n  },\n  {"

// Other writers lay events out their own ways: tracelens capture one per
// line ("},\n  {"), older Kineto and the synthetic traces "\n  },{", and
// an indenting JSON writer puts every event's '}' on its own line at the
// event's depth. The scanner takes the text between the first two events
// it scans as the file's separator too, from the line the first one's '}'
// starts (if only spaces precede it) to the second one's '{', when it
// holds a newline: a newline cannot be inside a string, and an indented
// nested value's '}' sits deeper, so the separator, like Kineto's, is
// rarely anywhere but between events. A single-line file (JAX's) has no
// such separator and is scanned serially.

// learnSeparator notes the separator between the event ending at buf[end]
// and the next starting at buf[next], once.
func (s *streamer) learnSeparator(end, next int) {
	if s.learned {
		return
	}
	s.learned = true
	b := s.buf
	if end < 1 || b[end-1] != '}' || b[next] != '{' {
		return
	}
	from := end - 1
	for from > 0 && (b[from-1] == ' ' || b[from-1] == '\t') {
		from--
	}
	if from > 0 && b[from-1] == '\n' {
		from--
	} else {
		from = end - 1
	}
	sep := b[from : next+1]
	if bytes.IndexByte(sep, '\n') < 0 || len(sep) > 64 {
		return
	}
	for _, known := range s.seps {
		if bytes.Equal(known, sep) {
			return
		}
	}
	s.seps = append(s.seps, bytes.Clone(sep))
}

// errMiss reports a speculative cut that was not an event boundary.
var errMiss = errors.New("speculative cut missed an event boundary")

// speculativeCut returns the end of the last event before one of the
// separators seps in b[p:], if the cut leaves at least half the buffer's
// events to a worker; 0 otherwise. It searches back from the end in
// growing windows: the last separator is usually within a few events of
// the end, and a separator the file no longer uses (a compile trace's
// prefix is laid out differently from the rest) would otherwise be
// searched for through half of every buffer (a fifth of the CPU time).
func speculativeCut(b []byte, p int, seps [][]byte) int {
	half := p + (len(b)-p)/2
	for w := 16 << 10; ; w *= 8 {
		from := max(half, len(b)-w)
		cut := 0
		for _, sep := range seps {
			if i := bytes.LastIndex(b[from:], sep); i >= 0 {
				// Just past the separator's '}': it is the first byte or
				// follows the newline and indentation.
				cut = max(cut, from+i+bytes.IndexByte(sep, '}')+1)
			}
		}
		if cut > 0 || from == half {
			return cut
		}
	}
}

// cutEvents models the events of a speculative batch, values separated by
// commas from buf[start] to exactly buf[end], walking each once: the fast
// path reads an event's fields while checking what the scanner checks
// (objectFields), and an event it declines is scanned and read the usual
// way. It returns the number of events and the end of the last, or errMiss
// when they do not end exactly at the cut.
func (w *worker) cutEvents(r *chunkResult, b *batch) (int, int, error) {
	buf := b.buf[:b.cutEnd]
	s := bstr(buf)
	end := len(buf)
	i, n := int(b.cutStart), 0
	for {
		var f fields
		e := -1
		if !w.slow {
			e = objectFields(s, i, buf, &f)
		}
		if e >= 0 {
			// The fast path skips what the model does not keep (an args
			// key, a nested string) without decoding it: its escapes are
			// checked here, as event checks a whole event's.
			if !badEscapeIn(r, s[i:e], b.base+int64(i)) {
				w.dispatch(r, &f, b.base+int64(i))
			}
		} else {
			var err error
			if e, err = scanValue(buf, i); err != nil {
				return n, 0, errMiss
			}
			w.event(r, s[i:e], b.base+int64(i))
		}
		n++
		j := e
		for j < end && classes[buf[j]] == clsSpace {
			j++
		}
		if j == end {
			return n, e, nil
		}
		if buf[j] != ',' {
			return n, 0, errMiss
		}
		j++
		for j < end && classes[buf[j]] == clsSpace {
			j++
		}
		i = j
	}
}

package ingest

import (
	"fmt"
	"io"
)

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

package ingest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// Direct reads take the reader's copy off the critical path for an
// uncompressed input that can be read at any offset (a file, an in-memory
// reader). With the speculative split, the scanner need not see a batch's
// bytes at all: it reads only a window before the batch's planned end to
// find the last separator there, and the worker reads the batch itself
// (ReadAt), in parallel with the others. On 16 cores the one goroutine
// read()ing the whole 513 MB compile trace was the critical path (160 of
// the 240 ms the scan took); the windows are a few percent of the input.
//
// The scanner enters direct reads after a speculative cut in its own
// buffer succeeds (so the file's separator is in use), and leaves them,
// seeking its reader to the last cut, when a window holds no separator or
// the input is near its end: the end of the event array and the members
// after it are scanned as usual. A batch that does not check out fails
// the read with errMiss, as a buffered one does.

// direct reads the JSON text at any offset.
type direct struct {
	ra   io.ReaderAt // the JSON text from offset 0
	size int64       // its size
	// seek moves the scanner's stream to offset off of the JSON text.
	seek func(off int64) error
	// note records that the scanner has handed out the text before off
	// (for progress and the budget's fraction read).
	note func(off int64)
}

// newDirect reads the JSON text at at..size of ra; seeker moves the
// stream the scanner reads (through br, which counts what it read, and pr)
// when the scanner leaves direct reads.
func newDirect(ra io.ReaderAt, seeker io.Seeker, at, size int64, br *bufio.Reader, pr *progressReader) *direct {
	cr := pr.cr
	note := func(off int64) {
		pr.out.Store(off)
		pr.in.Store(off)
		if cr.fn != nil && off-cr.last >= 1<<20 {
			cr.last = off
			cr.fn(off, cr.total)
		}
	}
	seek := func(off int64) error {
		if _, err := seeker.Seek(at+off, io.SeekStart); err != nil {
			return fmt.Errorf("seeking to byte %d: %w", off, err)
		}
		br.Reset(cr)
		cr.n.Store(off)
		pr.outAcc = off
		note(off)
		return nil
	}
	return &direct{ra: io.NewSectionReader(ra, at, size-at), size: size - at, seek: seek, note: note}
}

// regionCut finds where a batch starting at the event at start should end
// if it is to end near target: just past the '}' of the last separator
// before target, searched for in growing windows back to halfway, as
// speculativeCut does in a buffer. It returns that cut and the offset of
// the next event's '{', or cut 0 when the second half holds no separator.
func (d *direct) regionCut(start, target int64, seps [][]byte, window *[]byte) (cut, next int64, err error) {
	half := start + (target-start)/2
	for w := int64(16 << 10); ; w *= 8 {
		from := max(half, target-w)
		n := int(target - from)
		if cap(*window) < n {
			*window = make([]byte, n)
		}
		b := (*window)[:n]
		if _, err := d.ra.ReadAt(b, from); err != nil {
			return 0, 0, fmt.Errorf("reading bytes %d to %d: %w", from, target, err)
		}
		for _, sep := range seps {
			if i := bytes.LastIndex(b, sep); i >= 0 {
				if c := from + int64(i+bytes.IndexByte(sep, '}')+1); c > cut {
					cut, next = c, from+int64(i+len(sep)-1)
				}
			}
		}
		if cut > 0 || from == half {
			return cut, next, nil
		}
	}
}

// regions hands out batches read directly, from the event whose '{' is at
// buf[p], for as long as windows find separators and the input is not
// near its end. It reports whether it handed out any; if so the stream
// has moved to just past the last one's cut and the buffer is empty.
func (s *streamer) regions(p int) (bool, error) {
	d := s.direct
	start := s.base + int64(p)
	resume := int64(-1) // the cut after the last batch handed out
	for {
		target := start + int64(s.chunk)
		if target+int64(s.chunk) > d.size {
			break
		}
		cut, next, err := d.regionCut(start, target, s.seps, &s.window)
		if err != nil {
			return false, err
		}
		if cut == 0 {
			break
		}
		b := &batch{seq: s.seq, base: start, region: int32(cut - start), src: d.ra, cutEnd: int32(s.chunk)}
		s.seq++
		t := s.clock.now()
		if !s.emit(b) {
			return false, errStopped
		}
		s.clock.add("scan: wait for a worker", t)
		resume, start = cut, next
		d.note(cut)
	}
	if resume < 0 {
		return false, nil
	}
	if err := d.seek(resume); err != nil {
		return false, err
	}
	s.base, s.pos, s.n = resume, 0, 0
	return true, nil
}

// readRegion reads a direct batch into the worker's own buffer and returns
// the batch as the scanner would have cut it in a buffer of its own. The
// buffer is allocated once, at the batch size (cutEnd of a direct batch),
// which no region passes: regions end anywhere in the second half of it,
// and growing to each larger one made the worker allocate again and again.
func (w *worker) readRegion(b *batch) (*batch, error) {
	n := int(b.region)
	if cap(w.region) < n {
		w.region = make([]byte, max(n, int(b.cutEnd)))
	}
	buf := w.region[:n]
	if _, err := b.src.ReadAt(buf, b.base); err != nil {
		return nil, fmt.Errorf("reading bytes %d to %d: %w", b.base, b.base+int64(n), err)
	}
	return &batch{seq: b.seq, buf: buf, base: b.base, cutStart: 0, cutEnd: int32(n)}, nil
}

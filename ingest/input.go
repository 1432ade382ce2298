package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"

	"github.com/tracelens/tracelens/trace"
)

// input is a read's byte source: the raw reader, counted for progress and
// buffered, and its JSON text, decompressed when it is gzip.
type input struct {
	cr  *countingReader
	br  *bufio.Reader
	src io.Reader   // the JSON text
	gzr *gzipReader // nil: not compressed
}

// openInput wraps raw for reading, recognising gzip by its magic bytes.
// The caller closes gzr's decompressor.
func openInput(raw io.Reader, total int64, progress func(read, total int64)) (*input, error) {
	cr := &countingReader{r: raw, total: total, fn: progress}
	br := bufio.NewReaderSize(cr, 64<<10)
	in := &input{cr: cr, br: br, src: br}
	magic, _ := br.Peek(2)
	if bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("not a valid gzip file: %w", err)
		}
		in.gzr = &gzipReader{zr: zr, br: br, cr: cr, garbageAt: -1}
		zr.Multistream(false)
		in.src = in.gzr
	}
	return in, nil
}

// countingReader reports progress on the raw (possibly compressed) bytes.
// n is read by the merger to extrapolate the model's size, hence atomic.
type countingReader struct {
	r     io.Reader
	n     atomic.Int64
	total int64
	last  int64
	fn    func(read, total int64)
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	n := c.n.Add(int64(k))
	// Every 64 KiB: a budget error names the byte reached, and a gzip
	// bomb's first megabyte already holds millions of events.
	if c.fn != nil && (n-c.last >= 64<<10 || err != nil) {
		c.last = n
		c.fn(n, c.total)
	}
	return k, err
}

// progressReader is what the scanner reads: the JSON text. After each
// read it notes how much JSON has come out and how much of the file went
// in to make it (bytes read less those still buffered), so the merger can
// tell which fraction of the file the events merged so far came from. A
// gzip bomb expands 1000-fold: the compressed bytes read ahead alone would
// otherwise be many times the events merged.
type progressReader struct {
	r      io.Reader
	br     *bufio.Reader
	cr     *countingReader
	in     atomic.Int64
	out    atomic.Int64
	outAcc int64
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.outAcc += int64(n)
	p.out.Store(p.outAcc)
	p.in.Store(p.cr.n.Load() - int64(p.br.Buffered()))
	return n, err
}

// fraction estimates the share of the file that held the JSON text up to
// offset end; 0 when the file's size is unknown.
func (p *progressReader) fraction(end int64) float64 {
	in, out := p.in.Load(), p.out.Load()
	if p.cr.total <= 0 || out <= 0 {
		return 0
	}
	return min(float64(end)/float64(out)*float64(in)/float64(p.cr.total), 1)
}

// scanFailure is the error a read whose workers all succeeded ends with:
// the scanner's (a corrupt gzip stream named as such, bytes after the
// gzip data described), or an input with no events.
func (in *input) scanFailure(scanErr error, st *streamer) error {
	if scanErr != nil {
		var ge gzipError
		if errors.As(scanErr, &ge) {
			return fmt.Errorf("corrupt gzip data: %w", ge.err)
		}
		if in.gzr != nil && in.gzr.garbageAt >= 0 {
			return fmt.Errorf("%w (%s)", scanErr, in.gzr.garbage())
		}
		return scanErr
	}
	if !st.sawEvents {
		if len(st.top) > 0 {
			return &FormatError{Msg: "no traceEvents array: not a Chrome trace"}
		}
		return &FormatError{Msg: "no events"}
	}
	return nil
}

// finish refuses a Chrome trace none of whose events tracelens models,
// warns of an event array left open or bytes after the gzip data, and
// reports the final progress.
func (in *input) finish(t *trace.Trace, st *streamer) error {
	if t.Meta.Format == "chrome" && t.Events > 0 && modelled(t) == 0 {
		return &FormatError{Msg: fmt.Sprintf("not a profiler trace: none of its %d events is one tracelens models%s", t.Events, topSkip(t))}
	}
	if st.unclosed {
		t.Warnings = append(t.Warnings, fmt.Sprintf("the event array ends without its closing ']' (the writing process may have died): read the %d whole events before the end, as Chrome's trace viewer does", t.Events))
	}
	if in.gzr != nil && in.gzr.garbageAt >= 0 {
		t.Warnings = append(t.Warnings, "ignored "+in.gzr.garbage())
	}
	if in.cr.fn != nil {
		in.cr.fn(in.cr.n.Load(), in.cr.total)
	}
	return nil
}

// modelled counts the records a trace's events became.
func modelled(t *trace.Trace) int {
	return len(t.GPU) + len(t.APICalls) + len(t.Ops) + len(t.Frames) + len(t.Annotations) + len(t.GPUAnnotations) + len(t.Memory)
}

// topSkip names the commonest reason events were skipped, for errors.
func topSkip(t *trace.Trace) string {
	best := -1
	for i, s := range t.Skipped {
		if best < 0 || s.Count > t.Skipped[best].Count {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	s := t.Skipped[best]
	return fmt.Sprintf(" (%d: %s, the first at byte %d)", s.Count, s.Reason, s.FirstOffset)
}

package ingest

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// chunkedReader returns at most n bytes per Read, like a pipe or a
// decompressor does.
type chunkedReader struct {
	r io.Reader
	n int
}

func (c *chunkedReader) Read(p []byte) (int, error) {
	if len(p) > c.n {
		p = p[:c.n]
	}
	return c.r.Read(p)
}

// hugeValueTrace is a trace whose one event carries a string of n bytes
// in its args, and whose top level has another.
func hugeValueTrace(n int) []byte {
	big := strings.Repeat("x", n)
	return []byte(`{"traceName": "` + big + `", "traceEvents": [` + goodEvent + `,
		{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Input Dims":"` + big + `"}}, ` + goodEvent + `]}`)
}

// TestHugeValuesAreScannedInLinearTime: a value far larger than the read
// buffer, arriving in short reads (a pipe, gzip), is rescanned a bounded
// number of times, not once per read. Counting bytes keeps the test about
// the algorithm rather than this machine's speed.
func TestHugeValuesAreScannedInLinearTime(t *testing.T) {
	const n = 24 << 20
	in := hugeValueTrace(n)
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write(in)
	zw.Close()
	sources := map[string]func() io.Reader{
		"pipe-like 4 KiB reads": func() io.Reader { return &chunkedReader{bytes.NewReader(in), 4 << 10} },
		"gzip": func() io.Reader {
			zr, err := gzip.NewReader(bytes.NewReader(zipped.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			return zr
		},
	}
	for name, src := range sources {
		st := &streamer{r: src(), chunk: 256 << 10, free: make(chan []byte, 4)}
		events := 0
		st.emit = func(b *batch) bool { events += len(b.spans) / 2; return true }
		if err := st.run(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if events != 3 || len(st.top["traceName"]) != n+2 {
			t.Fatalf("%s: %d events, traceName of %d bytes", name, events, len(st.top["traceName"]))
		}
		// Doubling the buffer from 256 KiB to fit 24 MiB rescans each
		// value at most ~2× its size; one rescan per 4 KiB read would be
		// ~n²/8 KiB, thousands of times the input.
		if st.rescanned > 4*int64(len(in)) {
			t.Errorf("%s: rescanned %d bytes for %d of input: quadratic", name, st.rescanned, len(in))
		}
	}
	// Through the whole reader too, gzip and short reads together.
	tr, err := Read(&chunkedReader{bytes.NewReader(zipped.Bytes()), 1 << 10}, "huge", Options{chunk: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Ops) != 1 || len(tr.Ops[0].InputDims) != n+2 || tr.Meta.TraceName != strings.Repeat("x", n) {
		t.Errorf("huge values not read whole")
	}
}

package ingest

import (
	"bytes"
	"os"
	"testing"

	"github.com/tracelens/tracelens/fixtures"
	"github.com/tracelens/tracelens/fixtures/synth"
)

// BenchmarkRead50MB reads a ~50 MB trace made of copies of the default
// fixture (with Python stacks, like the real 500 MB torch.compile trace)
// from memory, so it measures parsing and model building, not the disk.
// `go tool task bench` measures the whole CLI on 50–500 MB files.
func BenchmarkRead50MB(b *testing.B) {
	in := benchInput(b)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Read(bytes.NewReader(in), "bench", Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// benchInput is ~50 MB of the default fixture repeated.
func benchInput(b *testing.B) []byte {
	raw, err := fixtures.Bytes(fixtures.Default)
	if err != nil {
		b.Fatal(err)
	}
	tmpl, err := synth.ParseGzip(raw)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := tmpl.Write(&buf, 50<<20); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkScan50MB times the serial part alone: finding event boundaries.
func BenchmarkScan50MB(b *testing.B) {
	in := benchInput(b)
	b.SetBytes(int64(len(in)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st := &streamer{r: bytes.NewReader(in), chunk: chunkSize, free: make(chan []byte, 4)}
		st.emit = func(bt *batch) bool {
			select {
			case st.free <- bt.buf:
			default:
			}
			return true
		}
		if err := st.run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParse50MB times one worker parsing every batch (no merge).
func BenchmarkParse50MB(b *testing.B) {
	in := benchInput(b)
	var batches []*batch
	st := &streamer{r: bytes.NewReader(in), chunk: chunkSize, free: make(chan []byte)}
	st.emit = func(bt *batch) bool { batches = append(batches, bt); return true }
	if err := st.run(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w := newWorker(0, nil)
		for _, bt := range batches {
			w.parse(bt)
		}
	}
}

// BenchmarkReadFile reads the trace named by $TRACELENS_BENCH_FILE (e.g.
// one `go run ./fixtures/gen -class compile` wrote), for profiling on a
// real-sized input: go test -run '^$' -bench ReadFile -cpuprofile cpu.out
func BenchmarkReadFile(b *testing.B) {
	path := os.Getenv("TRACELENS_BENCH_FILE")
	if path == "" {
		b.Skip("set TRACELENS_BENCH_FILE to a trace")
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	for i := 0; i < b.N; i++ {
		if _, err := ReadFile(path, Options{GCLimit: JSONSize(path) * 45 / 100}); err != nil {
			b.Fatal(err)
		}
	}
}

package ingest

import (
	"bytes"
	"testing"

	"github.com/tracelens/tracelens/fixtures"
	"github.com/tracelens/tracelens/fixtures/synth"
)

// BenchmarkRead50MB reads a ~50 MB trace made of copies of the default
// fixture (with Python stacks, like the real 500 MB torch.compile trace)
// from memory, so it measures parsing and model building, not the disk.
// `go tool task bench` measures the whole CLI on 50–500 MB files.
func BenchmarkRead50MB(b *testing.B) {
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
	in := buf.Bytes()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Read(bytes.NewReader(in), "bench", Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

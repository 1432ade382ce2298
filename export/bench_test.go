package export_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tracelens/tracelens/export"
	"github.com/tracelens/tracelens/fixtures"
	"github.com/tracelens/tracelens/fixtures/synth"
)

// BenchmarkExport times a whole export of one generated trace (copies of
// the default fixture's steps with Python stacks, as `go run
// ./fixtures/gen` writes them): hashing, reading, analysis and writing
// every table, from a file as users run it. MB/s is over the input;
// out/in is the Parquet output's size as a fraction of it.
// `go test -bench Export/500MB ./export` is the 500 MB figure.
func BenchmarkExport(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int64
	}{{"50MB", 50 << 20}, {"500MB", 500 << 20}} {
		b.Run(size.name, func(b *testing.B) {
			path := generated(b, size.bytes)
			st, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			out := b.TempDir()
			ins := []export.Input{{Path: path, Run: "bench"}}
			b.SetBytes(st.Size())
			var o export.Outcome
			for b.Loop() {
				outs, err := export.Run(ins, export.Options{Dir: out, Force: true})
				if err != nil {
					b.Fatal(err)
				}
				if o = outs[0]; o.Status != export.Exported {
					b.Fatalf("%s: %v", o.Status, o.Err)
				}
			}
			b.ReportMetric(float64(o.OutputBytes)/float64(o.InputBytes), "out/in")
		})
	}
}

// generated writes a trace of about size bytes into a temporary file.
func generated(b *testing.B, size int64) string {
	b.Helper()
	raw, err := fixtures.Bytes(fixtures.Default)
	if err != nil {
		b.Fatal(err)
	}
	tmpl, err := synth.ParseGzip(raw)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "trace.json")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := tmpl.Write(f, size); err != nil {
		b.Fatal(err)
	}
	return path
}

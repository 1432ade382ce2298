package analyze

import (
	"bytes"
	"sync"
	"testing"

	"github.com/tracelens/tracelens/fixtures"
	"github.com/tracelens/tracelens/fixtures/synth"
	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
)

var (
	benchOnce  sync.Once
	benchJSON  []byte
	benchTrace *trace.Trace
	benchErr   error
)

// benchInput is ~50 MB of the default fixture (Python stacks, hooks, 35
// launches a step) repeated with fresh ids and shifted times, and its
// model.
func benchInput(b *testing.B) ([]byte, *trace.Trace) {
	benchOnce.Do(func() {
		raw, err := fixtures.Bytes(fixtures.Default)
		if err != nil {
			benchErr = err
			return
		}
		tmpl, err := synth.ParseGzip(raw)
		if err != nil {
			benchErr = err
			return
		}
		var buf bytes.Buffer
		if _, err := tmpl.Write(&buf, 50<<20); err != nil {
			benchErr = err
			return
		}
		benchJSON = buf.Bytes()
		benchTrace, benchErr = ingest.Read(bytes.NewReader(benchJSON), "bench", ingest.Options{})
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchJSON, benchTrace
}

// BenchmarkAnalyze runs every metric and analyzer over the 50 MB model;
// compare with BenchmarkIngest (same input): the target is ≤ 20% of it.
func BenchmarkAnalyze(b *testing.B) {
	in, t := benchInput(b)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Run(t, Config{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIngest is the baseline BenchmarkAnalyze is measured against.
func BenchmarkIngest(b *testing.B) {
	in, _ := benchInput(b)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ingest.Read(bytes.NewReader(in), "bench", ingest.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

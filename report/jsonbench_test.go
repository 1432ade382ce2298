package report

import (
	"bytes"
	"io"
	"os"
	"testing"
	"time"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/fixtures/cputime"
	"github.com/tracelens/tracelens/ingest"
)

// BenchmarkJSONOnTrace times JSON, the output of `report --format json`
// alone, on the trace at JSON_TRACE, read and analyzed once: for
// profiling the output of a big trace without the read's and the
// analysis's samples. cpu-ms/op is the process's CPU per output, what a
// loaded machine leaves steady. Skipped without JSON_TRACE.
func BenchmarkJSONOnTrace(b *testing.B) {
	path := os.Getenv("JSON_TRACE")
	if path == "" {
		b.Skip("JSON_TRACE not set")
	}
	tr, err := ingest.ReadFile(path, ingest.Options{})
	if err != nil {
		b.Fatal(err)
	}
	r, err := analyze.Run(tr, analyze.Config{})
	if err != nil {
		b.Fatal(err)
	}
	in := []Input{{Trace: tr, Result: r}}
	var w io.Writer = io.Discard
	var buf bytes.Buffer
	if os.Getenv("JSON_BUFFER") != "" {
		w = &buf
	}
	b.ReportAllocs()
	b.ResetTimer()
	var cpu time.Duration
	for range b.N {
		buf.Reset()
		before := cputime.Used()
		if err := JSON(w, in); err != nil {
			b.Fatal(err)
		}
		cpu += cputime.Used() - before
	}
	b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
}

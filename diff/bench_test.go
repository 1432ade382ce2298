package diff

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/fixtures"
	"github.com/tracelens/tracelens/fixtures/synth"
	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
)

var (
	benchOnce           sync.Once
	benchBase, benchNew *trace.Trace
	benchErr            error
)

// benchMB is the size of each generated trace: 250 MB, the size issue 12
// sets its target at, unless TRACELENS_BENCH_MB says otherwise.
func benchMB() int {
	if n, err := strconv.Atoi(os.Getenv("TRACELENS_BENCH_MB")); err == nil && n > 0 {
		return n
	}
	return 250
}

// benchTraces generates two traces of benchMB each from two real fixtures
// (the hooks run and the direct run of the same model: the comparison a
// user makes) and ingests them.
func benchTraces(b *testing.B) (*trace.Trace, *trace.Trace) {
	benchOnce.Do(func() {
		gen := func(name string) (*trace.Trace, error) {
			raw, err := fixtures.Bytes(name)
			if err != nil {
				return nil, err
			}
			tmpl, err := synth.ParseGzip(raw)
			if err != nil {
				return nil, err
			}
			var buf bytes.Buffer
			if _, err := tmpl.Write(&buf, int64(benchMB())<<20); err != nil {
				return nil, err
			}
			return ingest.Read(bytes.NewReader(buf.Bytes()), name, ingest.Options{})
		}
		if benchBase, benchErr = gen("eggroll_hooks.json.gz"); benchErr != nil {
			return
		}
		benchNew, benchErr = gen("eggroll_direct.json.gz")
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchBase, benchNew
}

// BenchmarkDiff times what `tracelens diff` does after reading: analyze
// both traces, then compare the two Results. It reports diff/analyze, the
// whole over the analyses alone; the target is ≤ 1.15 (Compare reads only
// the Results, so it adds little).
func BenchmarkDiff(b *testing.B) {
	base, next := benchTraces(b)
	b.ReportAllocs()
	var analyzing, comparing time.Duration
	for b.Loop() {
		t0 := time.Now()
		ba, err := analyze.Run(base, analyze.Config{})
		if err != nil {
			b.Fatal(err)
		}
		na, err := analyze.Run(next, analyze.Config{})
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := Compare(ba, na, Options{}); err != nil {
			b.Fatal(err)
		}
		analyzing += t1.Sub(t0)
		comparing += time.Since(t1)
	}
	b.ReportMetric(float64(analyzing+comparing)/float64(analyzing), "diff/analyze")
	b.ReportMetric(float64(comparing.Nanoseconds())/float64(b.N), "compare-ns/op")
}

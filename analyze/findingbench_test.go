package analyze

import (
	"os"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
)

// BenchmarkFindingOnTrace runs each analyzer (or late fact) named in
// FND_ANALYZERS (comma-separated) as a sub-benchmark over the trace at
// FND_TRACE, with every fact and metric, and the late facts it requires,
// computed once beforehand: for profiling one analyzer on a big trace.
// Skipped without FND_TRACE.
func BenchmarkFindingOnTrace(b *testing.B) {
	t, results, all := benchFactsAt(b, "FND_TRACE")
	r := all.metrics()
	r.view = newView(t, all)
	critical := newCriticalShares(all)
	for _, n := range strings.Split(os.Getenv("FND_ANALYZERS"), ",") {
		a := lookupAny(n)
		if a == nil {
			b.Fatalf("no analyzer %q", n)
		}
		b.Run(n, func(b *testing.B) { benchOne(b, t, r, results, critical, a) })
	}
}

// benchOne runs a b.N times over the facts in results and the late facts
// a requires (run once first).
func benchOne(b *testing.B, t *trace.Trace, r *Result, results map[*Analyzer]any, critical *criticalShares, a *Analyzer) {
	base := map[*Analyzer]any{}
	for k, v := range results {
		base[k] = v
	}
	var deps []*Analyzer
	for _, d := range order([]*Analyzer{a}) {
		if d.Fact != nil && d != a {
			deps = append(deps, d)
		}
	}
	if _, err := runGraph(t, deps, r, base, critical, nil, &stageClock{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		p := newPass(a, t, r, base)
		p.critical = critical
		var err error
		if a.Fact != nil {
			_, err = runFact(a, p)
		} else {
			_, err = runFindings(a, p)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// lookupAny returns the analyzer or fact called name, or nil.
func lookupAny(name string) *Analyzer {
	for _, a := range order(All()) {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// benchTraceAt reads the trace at the path in environment variable env,
// skipping the benchmark when it is not set.
func benchTraceAt(b *testing.B, env string) *trace.Trace {
	path := os.Getenv(env)
	if path == "" {
		b.Skip(env + " not set")
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	t, err := ingest.Read(f, path, ingest.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return t
}

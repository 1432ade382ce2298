package analyze

import (
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/tracelens/tracelens/fixtures/cputime"
	"github.com/tracelens/tracelens/trace"
)

// BenchmarkRunOnTrace runs the whole analysis (Run, every analyzer) over
// the trace at RUN_TRACE, read once: for profiling the analysis of a big
// trace without the read's samples; with RUN_STAGES set, each run's
// stage times go to stderr (run it with -cpu 1 for one core's
// CPU). Skipped without RUN_TRACE.
func BenchmarkRunOnTrace(b *testing.B) {
	t := benchTraceAt(b, "RUN_TRACE")
	var cfg Config
	if os.Getenv("RUN_STAGES") != "" {
		cfg.Stages = os.Stderr
	}
	b.ReportAllocs()
	b.ResetTimer()
	var cpu time.Duration
	for range b.N {
		// Collected before each run, as the CLI collects before its
		// analysis (membudget.TightenForAnalysis): the run's own
		// garbage then fits under the collector's goal, as it does
		// there, and no run pays for an earlier one's.
		b.StopTimer()
		runtime.GC()
		b.StartTimer()
		before := cputime.Used()
		if _, err := Run(t, cfg); err != nil {
			b.Fatal(err)
		}
		cpu += cputime.Used() - before
	}
	// CPU time, not wall time, is what a loaded machine leaves steady.
	b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
}

// benchFactsAt reads the trace at the path in env, derives its steps and
// finds every fact once: what the part benchmarks (metrics, steps, host
// passes, findings) time their parts against. Skipped without env.
func benchFactsAt(b *testing.B, env string) (*trace.Trace, map[*Analyzer]any, *index) {
	t, _, _ := deriveSteps(benchTraceAt(b, env))
	results := map[*Analyzer]any{}
	if _, err := runGraph(t, Facts(), nil, results, nil, nil, &stageClock{began: time.Now()}); err != nil {
		b.Fatal(err)
	}
	return t, results, newIndex(t, results)
}

package analyze

import (
	"math"
	"testing"
	"time"

	"github.com/tracelens/tracelens/fixtures/cputime"
)

// BenchmarkHostParts times the passes over the host model's frames and
// calls, one by one, over the trace at RUN_TRACE, its facts found once:
// the HostTable, the ledger's host unions (the ledger index), the Steps
// fact, hook-overhead's stats and the ops' and annotations' tables. Each
// part's least CPU time over the runs is reported (what a loaded
// machine's noise adds to a run, the least run has least of). Skipped
// without RUN_TRACE.
func BenchmarkHostParts(b *testing.B) {
	t, results, ix := benchFactsAt(b, "RUN_TRACE")
	ix.clock = &stageClock{began: time.Now()}
	r := &Result{}
	works := ix.stepWorks(r.Device)
	ix.stepTimes(r, works)
	windows := stepWindows(works)
	parts := []struct {
		name string
		fn   func()
	}{
		{"table", func() { newHostTable(t) }},
		{"ledger-index", func() { ix.newLedgerIndex(windows) }},
		{"steps", func() {
			if _, err := Steps.Fact(&Pass{Analyzer: Steps, Trace: t, resultOf: results}); err != nil {
				b.Fatal(err)
			}
		}},
		{"hooks", func() { ix.hookStats() }},
		{"ops", func() { ix.ops() }},
		{"annotations", func() { ix.annotations() }},
	}
	least := make([]time.Duration, len(parts))
	for k := range least {
		least[k] = math.MaxInt64
	}
	b.ResetTimer()
	for range b.N {
		for k, p := range parts {
			start := cputime.Used()
			p.fn()
			least[k] = min(least[k], cputime.Used()-start)
		}
	}
	for k, p := range parts {
		b.ReportMetric(float64(least[k])/1e6, p.name+"-ms")
	}
}

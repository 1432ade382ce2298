package analyze

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/tracelens/tracelens/fixtures/cputime"
	"github.com/tracelens/tracelens/trace"
)

// BenchmarkStepsParts times the steps metrics' parts (the ledger index,
// the ledgers, the step counts) over the trace at RUN_TRACE, its facts
// found once: for profiling them without the rest of the analysis.
// Skipped without RUN_TRACE.
func BenchmarkStepsParts(b *testing.B) {
	_, _, ix := benchFactsAt(b, "RUN_TRACE")
	ix.peerWait = unionSpans(slices.Clone([]trace.Span(nil)))
	ix.clock = &stageClock{began: time.Now()}
	r := &Result{}
	works := ix.stepWorks(r.Device)
	ix.stepTimes(r, works)
	windows := stepWindows(works)
	// The least CPU time of each part over the runs: what a loaded
	// machine's noise adds to a run, the least run has least of.
	index, ledgers, counts := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	timed := func(least *time.Duration, fn func()) {
		start := cputime.Used()
		fn()
		*least = min(*least, cputime.Used()-start)
	}
	b.ResetTimer()
	for range b.N {
		var li *ledgerIndex
		timed(&index, func() { li = ix.newLedgerIndex(windows) })
		timed(&ledgers, func() { ix.ledgers(r, works, li) })
		timed(&counts, func() { ix.stepCounts(r); ix.stepCalls(r, li.callDur) })
	}
	b.ReportMetric(float64(index)/1e6, "index-min-ms")
	b.ReportMetric(float64(ledgers)/1e6, "ledgers-min-ms")
	b.ReportMetric(float64(counts)/1e6, "counts-min-ms")
}

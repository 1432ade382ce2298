package tui

import (
	"sync/atomic"
	"testing"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/fixtures"
	"github.com/tracelens/tracelens/trace"
)

// The UI analyzes only through Options.Analyze (the command's one
// load-and-analyze path): once per trace shown, twice for a diff, and
// what it shows is that Result.
func TestAnalyzesOnlyThroughOptions(t *testing.T) {
	var calls atomic.Int32
	var got atomic.Pointer[analyze.Result]
	count := func(tr *trace.Trace, cfg analyze.Config) (*analyze.Result, error) {
		calls.Add(1)
		r, err := analyze.Run(tr, cfg)
		got.Store(r)
		return r, err
	}
	opts := fixtureOptions(fixtures.Default)
	opts.Analyze = count
	m := loaded(t, opts, 120, 40)
	if n := calls.Load(); n != 1 || m.data.res != got.Load() {
		t.Errorf("one trace: %d analyses, shows the given result: %v", n, m.data.res == got.Load())
	}
	calls.Store(0)
	opts.BaseName, opts.LoadBase = fixtures.Default, fixtureLoader(fixtures.Default)
	loaded(t, opts, 120, 40)
	if n := calls.Load(); n != 2 {
		t.Errorf("a diff: %d analyses, want 2", n)
	}
}

package membudget

import (
	"context"
	"errors"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fake returns a budget whose resident size is what *n holds.
func fake(limit int64, n *atomic.Int64) *Budget {
	b := New(limit)
	b.rss = func() int64 { return n.Load() }
	return b
}

// Check passes under the budget and, over it, names the file, the stage
// and the byte reached (or the stage alone past reading).
func TestCheckNamesFileOffsetAndStage(t *testing.T) {
	var n atomic.Int64
	b := fake(100<<20, &n)
	n.Store(90 << 20)
	if err := b.Check(); err != nil {
		t.Fatalf("under the budget: %v", err)
	}
	n.Store(200 << 20)
	b.Enter("big.json", "reading")
	b.Progress(4096, 0)
	var e *Error
	if err := b.Check(); !errors.As(err, &e) || err.Error() != "big.json: reading, at byte 4096: the process needs more memory than the budget of 100.0 MB (200.0 MB in use); raise it with --max-memory SIZE" {
		t.Errorf("reading: %v", err)
	}
	b.Enter("big.json", "analysis")
	if err := b.Check(); err == nil || !strings.HasPrefix(err.Error(), "big.json: analysis: the process") {
		t.Errorf("analysis: %v", err)
	}
	b.Enter("", "")
	if err := b.Check(); err == nil || !strings.HasPrefix(err.Error(), "the process needs") {
		t.Errorf("no stage: %v", err)
	}
	var nilBudget *Budget
	if nilBudget.Check() != nil {
		t.Error("a nil budget checks nothing")
	}
}

// The watchdog stops at Hard (1.15× the budget, never under Floor), not
// at the budget itself, and picks up a limit set after it started.
func TestWatchStopsPastHard(t *testing.T) {
	var n atomic.Int64
	b := fake(1<<10, &n) // under Floor: held to Floor
	if want := float64(Floor) * HardFactor; b.Hard() != int64(want) {
		t.Fatalf("hard %d", b.Hard())
	}
	b.SetLimit(100 << 20)
	b.SetLimit(-1) // ignored
	n.Store(110 << 20)
	stopped := make(chan *Error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go b.Watch(ctx, func(e *Error) { stopped <- e })
	select {
	case e := <-stopped:
		t.Fatalf("stopped under Hard: %v", e)
	case <-time.After(20 * Interval):
	}
	n.Store(120 << 20)
	select {
	case e := <-stopped:
		if !e.Hard || e.InUse != 120<<20 || e.Budget != 100<<20 {
			t.Errorf("stop: %+v", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("not stopped past Hard")
	}
}

// The real resident size is read and plausible.
func TestResidentBytes(t *testing.T) {
	if n := residentBytes(); n < 1<<20 || n > 64<<30 {
		t.Errorf("resident size %d", n)
	}
	if n := heapEstimate(); n <= 0 {
		t.Errorf("heap estimate %d", n)
	}
}

// TestRelaxForAnalysis: a soft limit the live heap nears is raised to
// keep room above it (within the budget), once the collector has run
// under it relaxAfter times; one it is far below stays.
func TestRelaxForAnalysis(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	b := New(8 << 30)
	hold := make([]byte, 64<<20)
	runtime.GC()
	live := liveHeap()
	debug.SetMemoryLimit(live)
	b.limitSetAt.Store(gcCycles())
	b.RelaxForAnalysis()
	if got := debug.SetMemoryLimit(-1); got != live {
		t.Errorf("limit at the live heap relaxed to %d MB before any collection under it", got>>20)
	}
	for range relaxAfter {
		runtime.GC()
	}
	live = liveHeap()
	debug.SetMemoryLimit(live)
	b.RelaxForAnalysis()
	if got := debug.SetMemoryLimit(-1); got < int64(float64(live)*relaxTo) {
		t.Errorf("limit at the live heap (%d MB) relaxed to %d MB, want %.2f× it", live>>20, got>>20, relaxTo)
	}
	for range relaxAfter {
		runtime.GC()
	}
	debug.SetMemoryLimit(4 * live)
	b.RelaxForAnalysis()
	if got := debug.SetMemoryLimit(-1); got != 4*live {
		t.Errorf("limit 4× the live heap changed to %d MB", got>>20)
	}
	runtime.KeepAlive(hold)
}

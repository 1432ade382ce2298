package analyze

import (
	"math"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// TestLeafWork: leaf ops are work, their parents are not (the child's
// recording happens inside the parent), and the runtime calls inside a
// leaf are not either (CUPTI's callbacks lengthen them); overlapping
// threads count once; in clips to the interval.
func TestLeafWork(t *testing.T) {
	op := func(start, end trace.Time, parent trace.Index) trace.Op {
		return trace.Op{Span: trace.Span{Name: "op", Start: start, End: end}, Parent: parent}
	}
	tr := &trace.Trace{
		Ops: []trace.Op{
			op(0, 100, trace.None),  // parent of 1 and 2: not work
			op(10, 40, 0),           // leaf, with a launch 20–30 inside
			op(50, 90, 0),           // leaf
			op(80, 120, trace.None), // another thread's leaf, overlapping op 2
		},
		APICalls: []trace.APICall{{Span: trace.Span{Name: "cudaLaunchKernel", Start: 20, End: 30}, Op: 1}},
	}
	w := newLeafWork(tr, newHostTable(tr))
	// Work: 10–20, 30–40, 50–120.
	for _, c := range []struct {
		a, b trace.Time
		want trace.Duration
	}{{0, 200, 90}, {0, 10, 0}, {15, 35, 10}, {25, 28, 0}, {60, 100, 40}, {100, 100, 0}, {119, 500, 1}} {
		if got := w.in(c.a, c.b); got != c.want {
			t.Errorf("work in [%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	// The per-event estimate of [0, 200): 4 ops at the clock's rate,
	// capped at the 110 of the interval outside leaf work.
	clock := &profilerClock{perOpUs: 1e6, work: &w}
	if got, want := clock.eventsIn(0, 200, 4, 0, 0, 0), us(110); got != want {
		t.Errorf("profiler cost of [0, 200) = %g µs, want %g (outside leaf work)", got, want)
	}
	// Allocator events are recorded inside the ops: on top of the cap,
	// the whole at most the interval.
	clock.perOpUs = 0
	if got, want := clock.eventsIn(0, 200, 0, 0, 0, 1e9), us(200); got != want {
		t.Errorf("allocator events' cost %g µs, want the interval's %g", got, want)
	}
}

// TestLoaderOpsPriced: the ops inside a DataLoader's range are priced at
// OverheadPerLoaderOpUs, the others (and the range itself) at the
// per-op cost; each at most what the interval holds outside leaf work.
func TestLoaderOpsPriced(t *testing.T) {
	op := func(start trace.Time) trace.Op {
		return trace.Op{Span: trace.Span{Name: "aten::tanh", Start: start, End: start + 1}, Parent: trace.None}
	}
	tr := &trace.Trace{
		Meta:        trace.Metadata{Framework: "PyTorch"},
		Ops:         []trace.Op{op(10_000), op(20_000), op(150_000)},
		Annotations: []trace.Annotation{{Span: trace.Span{Name: "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", Start: 0, End: 100_000}}},
	}
	c := newProfilerClock(tr, newHostTable(tr))
	if ops, loader, _, _ := c.counts(0, 200_000); ops != 2 || loader != 2 {
		t.Fatalf("counts: %d ops, %d loading ops, want 2 and 2", ops, loader)
	}
	if got, want := c.costUs(0, 200_000), 2*OverheadPerOpUs+2*OverheadPerLoaderOpUs; math.Abs(got-want) > 1e-9 {
		t.Errorf("cost %g µs, want %g", got, want)
	}
}

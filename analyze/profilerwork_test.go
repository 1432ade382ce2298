package analyze

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tracelens/tracelens/interval"
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

// TestLeafWorkInMatchesWalk: over thousands of leaves (many strides of
// the start index), touching and apart, less calls that start inside
// them, span several or lie between them, the work in any interval is
// what a walk over each unit of time counts.
func TestLeafWorkInMatchesWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var leaves, calls []interval.Bounds
	at := trace.Time(0)
	for range 5000 {
		at += trace.Time(rng.IntN(3)) // some touch the one before
		end := at + 1 + trace.Time(rng.IntN(9))
		leaves = append(leaves, interval.Bounds{Start: at, End: end})
		at = end
	}
	for c := trace.Time(0); c < at; {
		c += trace.Time(rng.IntN(12))
		end := c + 1 + trace.Time(rng.IntN(4))
		if rng.IntN(20) == 0 {
			end += 25 // over several leaves
		}
		calls = append(calls, interval.Bounds{Start: c, End: end})
		c = end
	}
	w := leafWorkOf(leaves, calls)
	// work[u] says unit [u, u+1) is in a leaf and in no call.
	work := make([]bool, at+50)
	for _, s := range leaves {
		for u := s.Start; u < s.End; u++ {
			work[u] = true
		}
	}
	for _, c := range calls {
		for u := c.Start; u < min(c.End, trace.Time(len(work))); u++ {
			work[u] = false
		}
	}
	walk := func(a, b trace.Time) trace.Duration {
		var d trace.Duration
		for u := max(a, 0); u < min(b, trace.Time(len(work))); u++ {
			if work[u] {
				d++
			}
		}
		return d
	}
	if got, want := w.in(-10, at+50), walk(-10, at+50); got != want || len(w.spans) < 2*len(leaves)/3 {
		t.Fatalf("all the work: %d in %d parts, a walk %d", got, len(w.spans), want)
	}
	for range 3000 {
		a := trace.Time(rng.IntN(int(at)+20)) - 10
		b := a + trace.Time(rng.IntN(300))
		if got, want := w.in(a, b), walk(a, b); got != want {
			t.Fatalf("work in [%d, %d) = %d, a walk %d", a, b, got, want)
		}
	}
	for _, s := range w.spans[:300] {
		for _, ab := range [][2]trace.Time{{s.Start, s.End}, {s.End, s.End + 5}, {s.Start - 1, s.Start + 1}, {s.End - 1, s.End + 1}} {
			if got, want := w.in(ab[0], ab[1]), walk(ab[0], ab[1]); got != want {
				t.Fatalf("work in [%d, %d) = %d, a walk %d", ab[0], ab[1], got, want)
			}
		}
	}
	// Calls that split every leaf: as many parts as leaves and calls.
	var split []interval.Bounds
	for _, s := range leaves {
		if s.End-s.Start >= 3 {
			split = append(split, interval.Bounds{Start: s.Start + 1, End: s.Start + 2})
		}
	}
	if got := leafWorkOf(leaves, split); len(got.spans) > len(leaves)+len(split) || cap(got.spans) > len(got.spans)+len(got.spans)/8+16 {
		t.Fatalf("%d leaves less %d calls: %d parts kept in %d", len(leaves), len(split), len(got.spans), cap(got.spans))
	}
}

package ingest

import (
	"bytes"
	"io"
	"math"
	"reflect"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tracelens/tracelens/trace"
)

// TestPrefaultKeepsContents: faulting pages in ahead of the merger never
// changes what is already written there, whatever the alignment.
func TestPrefaultKeepsContents(t *testing.T) {
	b := make([]byte, 5<<20+123)
	for i := range b {
		b[i] = byte(i*7 + 1)
	}
	want := bytes.Clone(b)
	for _, off := range []int{0, 1, 4095, 4096, 3 << 20} {
		prefault(b[off:])
	}
	if !bytes.Equal(b, want) {
		t.Fatal("prefault changed the slice's contents")
	}
}

// TestPlannedReadGivesTheModel: a read that plans its model slices from
// the input's size (and has their pages faulted in by other goroutines)
// gives the model a read of the same bytes without a size gives, and has
// waited for those goroutines when it returns.
func TestPlannedReadGivesTheModel(t *testing.T) {
	raw := gunzip(t, "../fixtures/nanobragg_compile.json.gz")
	// An io.MultiReader has no Len: nothing to plan from.
	want, err := Read(io.MultiReader(bytes.NewReader(raw)), "n", Options{Workers: 1, chunk: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	sz := &sizer{budget: 1 << 40}
	eighth := want.Frames[:len(want.Frames)/8]
	frames := appendSized(sz, eighth[:len(eighth)/2:len(eighth)/2], eighth[len(eighth)/2:], 0.2)
	sz.prefaulting.Wait()
	if cap(frames) < len(want.Frames)/2 {
		t.Fatalf("appendSized planned %d frames after a fifth of %d: no plan, the test proves nothing", cap(frames), len(want.Frames)/8)
	}
	if !reflect.DeepEqual(frames, eighth) {
		t.Fatal("appendSized's planned slice does not hold what was appended")
	}
	before := runtime.NumGoroutine()
	got, err := Read(bytes.NewReader(raw), "n", Options{Workers: 3, chunk: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	// Goroutines that have finished may take a moment to be counted out.
	for i := 0; runtime.NumGoroutine() > before && i < 100; i++ {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after the read, %d before", n, before)
	}
	if !reflect.DeepEqual(got, want) {
		t.Error("the planned read's model differs from the unplanned one's")
	}
}

// TestSortByThreadSortsAsSortStable: the in-place sortedness check sorts
// exactly what sortStable with byThread sorts, and leaves sorted input.
func TestSortByThreadSortsAsSortStable(t *testing.T) {
	key := func(f *trace.PyFrame) (trace.Index, trace.Span) { return f.Thread, f.Span }
	var frames []trace.PyFrame
	for i := range 500 {
		frames = append(frames, trace.PyFrame{Span: trace.Span{Start: trace.Time(i * 7 % 13), End: trace.Time(i*7%13 + i%5)}, Thread: trace.Index(i % 3), PyID: int64(i)})
	}
	want := slices.Clone(frames)
	sortStable(want, byThread(key))
	got := slices.Clone(frames)
	sortByThread(got, key, 3)
	if !reflect.DeepEqual(got, want) {
		t.Fatal("sortByThread's order differs from sortStable's")
	}
	again := slices.Clone(got)
	sortByThread(again, key, 3)
	if !reflect.DeepEqual(again, got) {
		t.Fatal("sortByThread changed sorted input")
	}
	if reflect.DeepEqual(frames, want) {
		t.Fatal("the input was already sorted: the test proves nothing")
	}
}

// TestFrameIndexIsAMap: however dense the Python ids (Kineto's 1, 2, 3,
// the synthetic copies' third, sparse, repeated, extreme), the index
// finds what a map filled in frame order finds, through a slice or a map.
func TestFrameIndexIsAMap(t *testing.T) {
	kinds := map[bool]int{}
	for _, every := range []int64{1, 3, 8, 9, 20, 1 << 40} {
		for _, repeat := range []bool{false, true} {
			var frames []trace.PyFrame
			for i := range int64(3000) {
				id := 5 + i*every
				if repeat && i%7 == 0 {
					id = 5 // a repeated id: the last frame with it wins
				}
				if i%11 == 0 {
					id = 0 // no id
				}
				frames = append(frames, trace.PyFrame{PyID: id})
			}
			if every == 1<<40 {
				frames = append(frames, trace.PyFrame{PyID: math.MinInt64}, trace.PyFrame{PyID: math.MaxInt64})
			}
			want := map[int64]trace.Index{}
			for i, f := range frames {
				if f.PyID != 0 {
					want[f.PyID] = trace.Index(i)
				}
			}
			x := newFrameIndex(frames)
			kinds[x.dense != nil]++
			for _, id := range []int64{0, 1, 4, 5, 6, 5 + every, 5 + 2999*every, 5 + 3000*every, math.MinInt64, math.MaxInt64, -1} {
				got, ok := x.get(id)
				w, wok := want[id]
				if ok != wok || ok && got != w || id == 0 && ok {
					t.Errorf("ids every %d (repeat %v): get(%d) = %d, %v; a map gives %d, %v", every, repeat, id, got, ok, w, wok)
				}
			}
		}
	}
	if kinds[true] == 0 || kinds[false] == 0 {
		t.Errorf("slice used %d times, map %d times: both must be tested", kinds[true], kinds[false])
	}
}

// TestParallelRangesCoverEachIndexOnce: however n, the worker count and
// the least range length relate, the ranges cover [0, n) exactly once.
func TestParallelRangesCoverEachIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, 7, 100, 1000, 4097} {
		for _, workers := range []int{1, 2, 3, 16} {
			for _, minRange := range []int{0, 1, 10, 5000} {
				seen := make([]atomic.Int32, n)
				parallelRanges(n, workers, minRange, func(lo, hi int) {
					for i := lo; i < hi; i++ {
						seen[i].Add(1)
					}
				})
				for i := range seen {
					if c := seen[i].Load(); c != 1 {
						t.Fatalf("n %d, %d workers, ranges of at least %d: index %d covered %d times", n, workers, minRange, i, c)
					}
				}
			}
		}
	}
}

// TestConcurrentPanicReachesTheCaller: a bug in a pass run beside another
// must reach the reader's recover (an error), not end the process.
func TestConcurrentPanicReachesTheCaller(t *testing.T) {
	for _, bad := range []int{0, 1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("the panic in call %d was lost", bad)
				}
			}()
			calls := []func(){func() {}, func() {}}
			calls[bad] = func() { panic("bug") }
			concurrently(calls...)
		}()
	}
}

// TestSortByThreadChecksRangeBoundaries: with the order check split into
// ranges, a single pair out of order across two ranges is still found.
func TestSortByThreadChecksRangeBoundaries(t *testing.T) {
	key := func(f *trace.PyFrame) (trace.Index, trace.Span) { return f.Thread, f.Span }
	const n = 3 << 16
	frames := make([]trace.PyFrame, n)
	for i := range frames {
		frames[i].Start = trace.Time(i)
	}
	frames[n/3-1].Start, frames[n/3].Start = frames[n/3].Start, frames[n/3-1].Start
	sortByThread(frames, key, 3)
	if frames[n/3-1].Start > frames[n/3].Start {
		t.Fatal("the pair out of order at a range boundary was left unsorted")
	}
}

// TestParallelFrameParentsAreTheStackWalks: parents resolved over ranges
// in parallel are those the serial walk with a stack finds, for frames
// with ids, with ids missing or dangling, and without ids (JAX).
func TestParallelFrameParentsAreTheStackWalks(t *testing.T) {
	for _, noIDs := range []int{0, 1000, 1} {
		var frames []trace.PyFrame
		for i := range int64(200_000) {
			f := trace.PyFrame{Span: trace.Span{Start: trace.Time(i), End: trace.Time(i + i%5)}, Thread: trace.Index(i / 50_000), Parent: trace.None,
				PyID: i + 1, PyParentID: max(i-i%7, 0)}
			if i%13 == 0 {
				f.PyParentID = 1 << 40 // no such frame
			}
			if noIDs > 0 && i%int64(noIDs) == 0 {
				f.PyID, f.PyParentID = 0, 0
			}
			frames = append(frames, f)
		}
		want := &merger{t: &trace.Trace{Frames: slices.Clone(frames)}, remap: make([][]trace.Index, 1)}
		want.framesByStack(newFrameIndex(want.t.Frames))
		got := &merger{t: &trace.Trace{Frames: frames}, remap: make([][]trace.Index, 4)}
		got.frameParents()
		if !reflect.DeepEqual(got.t.Frames, want.t.Frames) {
			t.Errorf("frames without ids every %d: parallel parents differ from the stack walk's", noIDs)
		}
	}
}

package ingest

import (
	"bytes"
	"io"
	"math"
	"reflect"
	"runtime"
	"slices"
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
	sortByThread(got, key)
	if !reflect.DeepEqual(got, want) {
		t.Fatal("sortByThread's order differs from sortStable's")
	}
	again := slices.Clone(got)
	sortByThread(again, key)
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

package analyze

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// assertCriticalInOrder fails unless the one pass over tr's sorted model
// gives every activity the critical time the stream-by-stream pass does.
func assertCriticalInOrder(t *testing.T, name string, tr *trace.Trace) {
	t.Helper()
	host := newHostTable(tr)
	syncs := syncSpans(&host.calls)
	got, ok := criticalInOrder(tr, &host.calls, syncs)
	if !ok {
		t.Fatalf("%s: the model is not sorted by device, stream and start", name)
	}
	want := criticalByStream(tr, syncs)
	for g := range tr.GPU {
		if got.Of(g) != want.Of(g) {
			t.Fatalf("%s: activity %d: critical %d in one pass, %d stream by stream", name, g, got.Of(g), want.Of(g))
		}
	}
}

// TestCriticalInOrderMatchesStreams: on the recorded traces (one and
// several streams, pageable copies, syncs, JAX without launch records)
// the one pass prices every activity as the stream pass does.
func TestCriticalInOrderMatchesStreams(t *testing.T) {
	names, err := filepath.Glob("../fixtures/recorded/*.json.gz")
	if err != nil || len(names) < 10 {
		t.Fatalf("%d recorded traces (%v)", len(names), err)
	}
	for _, path := range names {
		name := "recorded/" + filepath.Base(path)
		assertCriticalInOrder(t, name, load(t, name))
	}
}

// TestCriticalInOrderDevicesAndOrder: a device without launch records is
// priced in full, even where a time was too long for 4 bytes; a stream
// restarts the sync walk; a model out of order is left to the stream
// pass, which prices it as it prices the sorted one.
func TestCriticalInOrderDevicesAndOrder(t *testing.T) {
	const long = trace.Time(5_000_000_000) // over critOverflow's 4.29 s
	tr := &trace.Trace{
		APICalls: []trace.APICall{
			{Span: trace.Span{Name: "cudaLaunchKernel", Start: 0, End: 5}},
			{Span: trace.Span{Name: "cudaLaunchKernel", Start: 6, End: 8}},
			{Span: trace.Span{Name: "cudaDeviceSynchronize", Start: 9, End: 60}},
			{Span: trace.Span{Name: "cudaMemcpy", Start: 100, End: 400}},
			{Span: trace.Span{Name: "cudaStreamSynchronize", Start: 500, End: long + 10}},
		},
	}
	act := func(dev, stream int32, start, end trace.Time, launch trace.Index) trace.GPUActivity {
		return trace.GPUActivity{Span: trace.Span{Name: "k", Start: start, End: end}, Device: dev, Stream: stream, Launch: launch}
	}
	tr.GPU = []trace.GPUActivity{
		act(0, 7, 4, 20, 0), act(0, 7, 21, 50, 1), act(0, 7, 200, 300, trace.None), act(0, 7, 600, long, trace.None),
		act(0, 9, 10, 30, trace.None), act(0, 9, 150, 250, trace.None),
		act(1, 7, 410, 450, trace.None), act(1, 7, 460, 470, trace.None), act(1, 7, 470, 470, trace.None), act(1, 7, 480, long, trace.None),
		act(2, 0, 700, long+5, trace.None),
	}
	tr.GPU[2].Kind, tr.GPU[2].Src = trace.Memcpy, trace.Pageable
	assertCriticalInOrder(t, "three devices", tr)
	c := newCritical(tr, newHostTable(tr))
	for g, want := range map[int]trace.Duration{6: 40, 7: 10, 8: 0, 9: trace.Duration(long - 480)} {
		if got := c.Of(g); got != want {
			t.Fatalf("device without launch records: activity %d critical %d, want its duration %d", g, got, want)
		}
	}
	if got := c.Of(1); got == 0 {
		t.Fatal("device with launch records: a queued kernel has no critical time")
	}
	shuffled := *tr
	shuffled.GPU = slices.Clone(tr.GPU)
	shuffled.GPU[0], shuffled.GPU[5] = shuffled.GPU[5], shuffled.GPU[0]
	sh := newHostTable(&shuffled)
	if _, ok := criticalInOrder(&shuffled, &sh.calls, syncSpans(&sh.calls)); ok {
		t.Fatal("a model out of order priced in one pass")
	}
	s := newCritical(&shuffled, sh)
	for g, k := range []int{5, 1, 2, 3, 4, 0, 6, 7, 8, 9, 10} {
		if s.Of(g) != c.Of(k) {
			t.Fatalf("out of order: activity %d priced %d, %d in order", g, s.Of(g), c.Of(k))
		}
	}
}

package analyze

import (
	"sort"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// assertClockCounts fails when tr's profiler clock (host: tr's
// HostTable) counts other ops and ranges, or frames, in an interval than
// a walk over the events does, over intervals from every stretch of the
// trace: the clock counts in the HostTable's columns and the frames in
// place when they come sorted, in lists of its own otherwise.
func assertClockCounts(t *testing.T, name string, tr *trace.Trace, h *hostTable) {
	t.Helper()
	pt := *tr
	pt.Meta.Framework = "PyTorch"
	c := newProfilerClock(&pt, h)
	if c == nil {
		t.Fatalf("%s: no clock", name)
	}
	if c.sortedFrames != nil {
		// Every frame's start and the times about it, against a search
		// of the frames themselves.
		f := tr.Frames
		for i := range f {
			for _, at := range []trace.Time{f[i].Start - 1, f[i].Start, f[i].Start + 1} {
				if got, want := c.firstFrameFrom(at), sort.Search(len(f), func(k int) bool { return f[k].Start >= at }); got != want {
					t.Fatalf("%s: first frame from %d: %d, a search of the frames %d", name, at, got, want)
				}
			}
		}
	}
	loading := loaderRanges(tr)
	var at []trace.Time
	for i := range tr.Ops {
		at = append(at, tr.Ops[i].Start, tr.Ops[i].End)
	}
	for i := range tr.Frames {
		at = append(at, tr.Frames[i].Start)
	}
	step := max(len(at)/40, 1)
	for i := 0; i < len(at); i += step {
		for j := 0; j < len(at); j += step * 7 {
			a, b := at[i], at[j]
			ops, frames := 0, 0
			for k := range tr.Ops {
				if s := tr.Ops[k].Start; s >= a && s < b && !overlapsAny(trace.Span{Start: s, End: s + 1}, loading) {
					ops++
				}
			}
			for k := range tr.Annotations {
				if s := tr.Annotations[k].Start; !tr.Annotations[k].GPU && s >= a && s < b {
					ops++
				}
			}
			for k := range tr.Frames {
				if s := tr.Frames[k].Start; s >= a && s < b {
					frames++
				}
			}
			if b < a {
				continue // a count of an empty interval is not asked
			}
			if gotOps, _, gotFrames, _ := c.counts(a, b); gotOps != ops || gotFrames != frames {
				t.Fatalf("%s: [%d, %d): clock counts %d ops and %d frames, the events %d and %d", name, a, b, gotOps, gotFrames, ops, frames)
			}
		}
	}
}

// assertFramesCounted is assertClockCounts for TestHostTableMatchesTrace.
func assertFramesCounted(t *testing.T, name string, tr *trace.Trace, h *hostTable) {
	t.Helper()
	assertClockCounts(t, name, tr, h)
}

// TestClockCountsInterleavedThreads: ops and frames on two threads
// (their starts not in order over the trace) and on one (in order), with
// and without a DataLoader range, are counted as a walk counts them.
func TestClockCountsInterleavedThreads(t *testing.T) {
	build := func(threads int, loader bool) *trace.Trace {
		tr := &trace.Trace{}
		for th := range threads {
			for k := range 300 {
				s := trace.Time(k*100 + th*37)
				tr.Ops = append(tr.Ops, trace.Op{Span: trace.Span{Name: "aten::add", Start: s, End: s + 20}, Thread: trace.Index(th), Parent: trace.None})
				tr.Frames = append(tr.Frames, trace.PyFrame{Span: trace.Span{Name: "f.py(1): g", Start: s + 1, End: s + 10}, Thread: trace.Index(th), Parent: trace.None})
			}
		}
		tr.Annotations = []trace.Annotation{{Span: trace.Span{Name: "range", Start: 250, End: 900}}, {Span: trace.Span{Name: "gpu", Start: 260, End: 300}, GPU: true}}
		if loader {
			tr.Annotations = append(tr.Annotations, trace.Annotation{Span: trace.Span{Name: "enumerate(DataLoader)#x", Start: 10000, End: 20000}})
		}
		return tr
	}
	for _, threads := range []int{1, 2} {
		for _, loader := range []bool{false, true} {
			tr := build(threads, loader)
			h := newHostTable(tr)
			if h.ops.sorted != (threads == 1) || h.frames.sorted != (threads == 1) {
				t.Fatalf("%d threads: ops sorted %v, frames sorted %v", threads, h.ops.sorted, h.frames.sorted)
			}
			assertClockCounts(t, "interleaved", tr, h)
		}
	}
}

package analyze

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/trace"
)

// TestLedgerHostUnions: each window's host intervals per source, cut from
// the index's unions (appendHost), are the union of every interval's part
// in the window, less the intervals enclosing it for a source that does
// not keep those, over random windows (overlapping, nested, empty ones
// among them) and families of nested, overlapping and enclosing intervals
// of several threads, read in one part or several.
func TestLedgerHostUnions(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	sources := []ledgerSource{srcSync, srcFramework, srcData}
	for round := range 300 {
		var win []trace.Span
		for range 1 + rng.IntN(8) {
			s := trace.Time(rng.IntN(300))
			win = append(win, trace.Span{Start: s, End: s + trace.Time(rng.IntN(60))})
		}
		// Each family: a thread's intervals or two, of mixed sources.
		var fams [nFamilies][]longPart
		for f := range fams {
			for range 1 + rng.IntN(2) {
				for _, s := range nestedSpans(rng) {
					fams[f] = append(fams[f], longPart{sources[rng.IntN(len(sources))], interval.Bounds{Start: s.Start, End: s.End}})
				}
			}
		}
		for _, parts := range []int{1, 2, 3, 7} {
			// As fileHostWork reads them: one family, then the
			// others, left out where the first one's union covers.
			li := newWindowIndex(win)
			for _, phase := range [][]int{{famFrames}, {famCalls, famCopies, famCompile, famOps, famRanges}} {
				scans := make([]hostScan, parts)
				for k := range scans {
					scans[k].li = li
					var in [nSources]unionCursor
					for src := range in {
						in[src] = unionCursor{spans: li.union[src], j: -1}
					}
					for _, f := range phase {
						lo, hi := share(len(fams[f]), k, parts)
						for _, p := range fams[f][lo:hi] {
							scans[k].fileUncovered(&scans[k].fam[f], &in, p.src, p.b.Start, p.b.End)
						}
					}
				}
				li.joinScans(scans)
			}
			for wi, w := range win {
				if w.End <= w.Start {
					continue // takes nothing from the host (newWindowIndex)
				}
				for _, src := range sources {
					var want []trace.Span
					for f := range fams {
						for _, p := range fams[f] {
							s := p.b
							if p.src != src || s.End <= s.Start || s.Start >= w.End || s.End <= w.Start || s.Start <= w.Start && s.End >= w.End && !keepsEnclosing(src) {
								continue
							}
							want = append(want, trace.Span{Start: max(s.Start, w.Start), End: min(s.End, w.End)})
						}
					}
					// The ledger reads the union's intervals only
					// inside the window: compared clipped.
					var sc ledgerScratch
					got := li.hostIn(wi, src, &sc)
					if slices.ContainsFunc(got, func(b interval.Bounds) bool { return b.End <= w.Start || b.Start >= w.End }) {
						t.Fatalf("round %d, %d parts, window %v, source %d: %v reaches outside", round, parts, w, src, got)
					}
					got = clipBounds(slices.Clone(got), w)
					if want := interval.BoundsOf(unionSpans(want)); !slices.Equal(got, want) {
						t.Fatalf("round %d, %d parts, window %v, source %d: %v, want %v", round, parts, w, src, got, want)
					}
				}
			}
		}
	}
}

// TestUnionSorted: the merge of two sorted, disjoint lists is their
// union, touching intervals joined.
func TestUnionSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	list := func() []interval.Bounds {
		var spans []trace.Span
		for range rng.IntN(8) {
			s := trace.Time(rng.IntN(100))
			spans = append(spans, trace.Span{Start: s, End: s + trace.Time(rng.IntN(20))})
		}
		return interval.BoundsOf(unionSpans(spans))
	}
	for range 2000 {
		a, b := list(), list()
		want := interval.UnionBounds(append(slices.Clone(a), b...))
		if got := unionSorted(slices.Clone(a), slices.Clone(b)); !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Fatalf("union of %v and %v: %v, want %v", a, b, got, want)
		}
	}
}

// TestUnionCursor: the cursor's answer from its last one is a search's,
// for intervals in order, out of order, before, between and after the
// union's.
func TestUnionCursor(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for range 300 {
		var spans []trace.Span
		for range rng.IntN(10) {
			s := trace.Time(rng.IntN(200))
			spans = append(spans, trace.Span{Start: s, End: s + trace.Time(rng.IntN(30))})
		}
		union := interval.BoundsOf(unionSpans(spans))
		c := unionCursor{spans: union, j: -1}
		at := trace.Time(-10)
		for range 60 {
			if rng.IntN(5) == 0 {
				at = trace.Time(rng.IntN(230) - 10) // another thread's
			} else {
				at += trace.Time(rng.IntN(12))
			}
			end := at + trace.Time(rng.IntN(20))
			want := slices.ContainsFunc(union, func(b interval.Bounds) bool { return b.Start <= at && end <= b.End })
			if got := c.covers(at, end); got != want {
				t.Fatalf("union %v: covers(%d, %d) = %v, want %v", union, at, end, got, want)
			}
		}
	}
}

// TestAppendSplit: the parts of a that b covers and (when b covers any)
// the rest of a, in one merge, are appendIntersect's and a
// subtraction's, for sorted, disjoint lists of intervals with a length;
// and for a inside a window, b's intervals overlapping the window
// (inWindow, unclipped) split it as b clipped to the window does.
func TestAppendSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	list := func() []trace.Span {
		var spans []trace.Span
		for range rng.IntN(10) {
			s := trace.Time(rng.IntN(150))
			spans = append(spans, trace.Span{Start: s, End: s + 1 + trace.Time(rng.IntN(25))})
		}
		return unionSpans(spans)
	}
	for range 3000 {
		a, b := list(), interval.BoundsOf(list())
		in, rest := appendSplit(nil, nil, a, b)
		want := appendIntersect(nil, interval.BoundsOf(a), b)
		if !slices.Equal(interval.BoundsOf(in), want) {
			t.Fatalf("%v split by %v: covered %v, want %v", a, b, in, want)
		}
		if want := subtractSpans(a, b); len(in) > 0 && !slices.Equal(rest, want) {
			t.Fatalf("%v split by %v: rest %v, want %v", a, b, rest, want)
		}
		start := trace.Time(rng.IntN(150))
		w := trace.Span{Start: start, End: start + 1 + trace.Time(rng.IntN(60))}
		inW := make([]trace.Span, 0, len(a))
		for _, c := range clipBounds(interval.BoundsOf(a), w) {
			inW = append(inW, c.Span())
		}
		at := rng.IntN(len(b) + 1)
		in1, rest1 := appendSplit(nil, nil, inW, inWindow(b, w, &at))
		in2, rest2 := appendSplit(nil, nil, inW, clipBounds(slices.Clone(b), w))
		if !slices.Equal(in1, in2) || len(in1) > 0 && !slices.Equal(rest1, rest2) {
			t.Fatalf("%v in %v split by %v: %v and %v, clipped %v and %v", inW, w, b, in1, rest1, in2, rest2)
		}
	}
}

// TestInWindow: a window's part of a union, found from the last
// window's (a short walk, a search after 64 steps, from the start for an
// earlier window), is the union's intervals that overlap it.
func TestInWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for range 200 {
		var spans []trace.Span
		for range rng.IntN(400) {
			s := trace.Time(rng.IntN(5000))
			spans = append(spans, trace.Span{Start: s, End: s + 1 + trace.Time(rng.IntN(20))})
		}
		union := interval.BoundsOf(unionSpans(spans))
		at, start := 0, trace.Time(-50)
		for range 100 {
			if rng.IntN(6) == 0 {
				start = trace.Time(rng.IntN(5100) - 50) // anywhere, earlier too
			} else {
				start += trace.Time(rng.IntN(200))
			}
			w := trace.Span{Start: start, End: start + trace.Time(rng.IntN(150))}
			var want []interval.Bounds
			for _, b := range union {
				if w.End > w.Start && b.End > w.Start && b.Start < w.End {
					want = append(want, b)
				}
			}
			if got := inWindow(union, w, &at); !slices.Equal(got, want) {
				t.Fatalf("window %v of %v: %v, want %v", w, union, got, want)
			}
		}
	}
}

// subtractSpans is a less b, both sorted and disjoint, piece by piece of
// a: what splitLedger subtracted before appendSplit.
func subtractSpans(a []trace.Span, b []interval.Bounds) []trace.Span {
	var dst []trace.Span
	j := 0
	for _, s := range a {
		for j < len(b) && b[j].End <= s.Start {
			j++
		}
		cur := s.Start
		for k := j; k < len(b) && b[k].Start < s.End; k++ {
			if b[k].Start > cur {
				dst = append(dst, trace.Span{Start: cur, End: b[k].Start})
			}
			cur = max(cur, b[k].End)
		}
		if cur < s.End {
			dst = append(dst, trace.Span{Start: cur, End: s.End})
		}
	}
	return dst
}

// nestedSpans returns intervals in start order, each nested in, after or
// overlapping the one before, as a thread's frames and ops come.
func nestedSpans(rng *rand.Rand) []trace.Span {
	var out []trace.Span
	at := trace.Time(rng.IntN(20))
	for range 3 + rng.IntN(25) {
		s := trace.Span{Start: at, End: at + trace.Time(rng.IntN(80))}
		if n := len(out); n > 0 && rng.IntN(2) == 0 {
			p := out[n-1] // nested in the last one, or at its start
			s.Start = max(p.Start, at)
			s.End = s.Start + trace.Time(rng.IntN(int(max(p.End-s.Start, 0))+1))
		}
		out = append(out, s)
		at = s.Start + trace.Time(rng.IntN(15))
	}
	return out
}

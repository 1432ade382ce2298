package analyze

import (
	"cmp"
	"slices"

	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/trace"
)

// stepLedger splits window i (step i's) into its lines, appending each
// line's time to out; each line's intervals are left in sc.segs. It
// counts the step's GPU work into st as it reads it (countGPU).
func (ix *index) stepLedger(li *ledgerIndex, own []trace.Index, i int, sc *ledgerScratch, st *Step, out []LedgerEntry) []LedgerEntry {
	t := ix.t
	w := li.win[i]
	gpu := &sc.gpu
	for s := range gpu {
		gpu[s] = gpu[s][:0]
	}
	for _, g := range own {
		a := &t.GPU[g]
		ix.countGPU(st, g, a)
		if a.End <= a.Start {
			continue
		}
		src := srcCompute
		switch {
		case ix.PhaseFacts != nil && ix.PhaseFacts.autotune != nil && ix.PhaseFacts.autotune[g]:
			src = srcAutotune
		case a.Kind != trace.Kernel:
			src = srcCopy
		case ix.category(int(g)) == CategoryCommunication:
			src = srcComm
		}
		gpu[src] = append(gpu[src], interval.Bounds{Start: a.Start, End: a.End})
	}
	// Streams overlap: critical time summed over activities can pass
	// the step's busy time (a union); it is a part of it.
	st.GPUBoundUs = min(st.GPUBoundUs, st.GPUBusyUs)
	sets := &sc.sets
	for s := srcAutotune; s <= srcCopy; s++ {
		gpu[s] = clipBounds(interval.UnionBounds(gpu[s]), w)
		sets[s] = gpu[s]
	}
	// Waiting is the step's own communication kernels' spin: the part of
	// them inside the peer-wait intervals.
	sc.win = appendInWindow(sc.win[:0], li.peerWait, w)
	gpu[srcPeerWait] = appendIntersect(gpu[srcPeerWait], gpu[srcComm], sc.win)
	sets[srcPeerWait] = gpu[srcPeerWait]
	// The other sources' unions are read where they lie, not copied:
	// what is left of the window is inside it, so the parts of theirs
	// outside it meet nothing (appendSplit).
	sets[srcOther], sets[srcBefore] = inWindow(li.other, w, &sc.at[srcOther]), inWindow(li.before, w, &sc.at[srcBefore])
	for s := srcSync; s < nSources; s++ {
		sets[s] = li.hostIn(i, s, sc)
	}
	return splitLedger(sets, w, sc, out)
}

// ledgerScratch is the storage stepLedger reuses from step to step: a
// step's interval sets are garbage once its ledger is encoded, and made
// afresh per step they were 450 MB of allocation at 1 M kernels, garbage
// the collector chased under the analysis's soft limit (issue 27).
type ledgerScratch struct {
	// gpu holds the GPU sources' intervals; sets each source's, gpu's
	// or the ledger index's own (read, never written); host a window's
	// host intervals where long ones join them (hostIn); segs each
	// line's intervals, in ledgerLineOrder; left and next what
	// splitLedger has not yet assigned; win a window's peer-wait
	// intervals; enc the encoding; at, per source, where the last
	// window's part of the ledger index's union began (inWindow).
	gpu, sets, host [nSources][]interval.Bounds
	at              [nSources]int
	segs            [nLedgerLines][]trace.Span
	left, next      []trace.Span
	win             []interval.Bounds
	enc             []byte
}

// inWindow returns the intervals of sorted, disjoint spans, each with a
// length, that overlap w: a part of spans, not a copy, so not clipped to
// w; none for a window without a length. *at is where the last window's
// part began (0 at first): the steps come in order, so the next part
// begins a few intervals on, found by a short walk rather than a search
// of the whole union (two per source and step were a tenth of the
// ledgers' time).
func inWindow(spans []interval.Bounds, w trace.Span, at *int) []interval.Bounds {
	if w.End <= w.Start {
		return nil
	}
	lo := min(*at, len(spans))
	if lo > 0 && spans[lo-1].End > w.Start {
		lo = 0 // an earlier window: searched from the start
	}
	for walked := 0; lo < len(spans) && spans[lo].End <= w.Start; lo++ {
		if walked++; walked == 64 {
			k, _ := slices.BinarySearchFunc(spans[lo:], w.Start, func(s interval.Bounds, at trace.Time) int { return cmp.Compare(s.End, at+1) })
			lo += k
			break
		}
	}
	*at = lo
	hi := lo
	for hi < len(spans) && spans[hi].Start < w.End {
		hi++
	}
	return spans[lo:hi]
}

// appendInWindow appends the parts of sorted, disjoint spans inside w,
// found by binary search, to dst.
func appendInWindow(dst, spans []interval.Bounds, w trace.Span) []interval.Bounds {
	lo, _ := slices.BinarySearchFunc(spans, w.Start, func(s interval.Bounds, at trace.Time) int { return cmp.Compare(s.End, at+1) })
	for _, s := range spans[lo:] {
		if s.Start >= w.End {
			break
		}
		if p := (interval.Bounds{Start: max(s.Start, w.Start), End: min(s.End, w.End)}); p.End > p.Start {
			dst = append(dst, p)
		}
	}
	return dst
}

// clipBounds clips sorted, disjoint bounds to w in place, dropping empty
// ones.
func clipBounds(bounds []interval.Bounds, w trace.Span) []interval.Bounds {
	out := bounds[:0]
	for _, b := range bounds {
		b.Start, b.End = max(b.Start, w.Start), min(b.End, w.End)
		if b.End > b.Start {
			out = append(out, b)
		}
	}
	return out
}

// sourceLineIndex is, per ledger source, its line's position in
// ledgerLineOrder.
var sourceLineIndex = func() (k [nSources]int) {
	for s, line := range sourceLine {
		k[s] = slices.Index(ledgerLineOrder, line)
	}
	return k
}()

// lineIdle is LineIdle's position in ledgerLineOrder.
var lineIdle = slices.Index(ledgerLineOrder, LineIdle)

// splitLedger puts every instant of w in the first source, in priority
// order, whose sorted disjoint intervals cover it (LineIdle when none
// does): what is left of the window loses each source's intervals in
// turn, one linear merge per source. Each source's intervals are in
// sets (they may reach past w: they are met only inside it); each line's
// intervals are left in sc.segs, its time appended to out.
func splitLedger(sets *[nSources][]interval.Bounds, w trace.Span, sc *ledgerScratch, out []LedgerEntry) []LedgerEntry {
	for k := range sc.segs {
		sc.segs[k] = sc.segs[k][:0]
	}
	left, next := append(sc.left[:0], w), sc.next
	for s, set := range sets {
		if len(set) == 0 || len(left) == 0 {
			continue
		}
		k := sourceLineIndex[s]
		n := len(sc.segs[k])
		// A source that covers nothing of what is left leaves it
		// whole.
		if sc.segs[k], next = appendSplit(sc.segs[k], next[:0], left, set); len(sc.segs[k]) > n {
			left, next = next, left
		}
	}
	sc.segs[lineIdle] = append(sc.segs[lineIdle], left...)
	sc.left, sc.next = left, next
	for k, line := range ledgerLineOrder {
		v := sc.segs[k]
		if !disjointSorted(v) {
			// Two sources of one line (compilation on the host and its
			// autotuning on the GPU) or adjacent parts: one sorted union.
			v = unionSpans(v)
			sc.segs[k] = v
		}
		out = append(out, LedgerEntry{Line: line, Us: us(spansDuration(v))})
	}
	return out
}

// appendSplit appends the parts of a that b covers to in and, when b
// covers any, the rest of a to rest (rest is left as it is otherwise: a
// is what is left then), a and b sorted, disjoint and of intervals with
// a length: an intersection's and a subtraction's answers in one merge,
// which stops where b ends.
func appendSplit(in, rest, a []trace.Span, b []interval.Bounds) ([]trace.Span, []trace.Span) {
	n := len(in)
	j := 0
	for i, s := range a {
		for j < len(b) && b[j].End <= s.Start {
			j++
		}
		switch {
		case j == len(b) && len(in) == n:
			return in, rest
		case j == len(b):
			return in, append(rest, a[i:]...)
		case b[j].Start >= s.End:
			// b[j] ends after s starts (the first that does) and
			// starts after it ends: s is left whole.
			if len(in) > n {
				rest = append(rest, s)
			}
			continue
		case len(in) == n:
			rest = append(rest, a[:i]...) // left whole before the first part covered
		}
		cur := s.Start
		for k := j; k < len(b) && b[k].Start < s.End; k++ {
			// b[k] ends after s starts (b's ends rise from j's on).
			in = append(in, trace.Span{Start: max(s.Start, b[k].Start), End: min(s.End, b[k].End)})
			if b[k].Start > cur {
				rest = append(rest, trace.Span{Start: cur, End: b[k].Start})
			}
			cur = max(cur, b[k].End)
		}
		if cur < s.End {
			rest = append(rest, trace.Span{Start: cur, End: s.End})
		}
	}
	return in, rest
}

// disjointSorted reports whether spans are in order, each starting after
// the one before ends: a union already, which unionSpans would leave as
// it is.
func disjointSorted(spans []trace.Span) bool {
	for i := 1; i < len(spans); i++ {
		if spans[i].Start <= spans[i-1].End {
			return false
		}
	}
	return true
}

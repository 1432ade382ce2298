package analyze

import (
	"cmp"
	"slices"

	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/trace"
)

// stepLedger splits window i (step i's) into its lines, appending each
// line's time to out; each line's intervals are left in sc.segs.
func (ix *index) stepLedger(li *ledgerIndex, own []trace.Index, i int, sc *ledgerScratch, out []LedgerEntry) []LedgerEntry {
	t := ix.t
	w := li.win[i]
	sets := &sc.sets
	for s := range sets {
		sets[s] = sets[s][:0]
	}
	for _, g := range own {
		a := &t.GPU[g]
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
		sets[src] = append(sets[src], a.Span)
	}
	for s := srcAutotune; s <= srcCopy; s++ {
		sets[s] = clipSpans(unionInOrder(sets[s]), w)
	}
	// Waiting is the step's own communication kernels' spin: the part of
	// them inside the peer-wait intervals.
	sc.win = appendInWindow(sc.win[:0], li.peerWait, w)
	sets[srcPeerWait] = appendIntersect(sets[srcPeerWait], sets[srcComm], sc.win)
	sets[srcOther] = appendInWindow(sets[srcOther], li.other, w)
	sets[srcBefore] = appendInWindow(sets[srcBefore], li.before, w)
	host := &sc.host
	for s := srcSync; s < nSources; s++ {
		host[s] = li.appendHost(host[s][:0], i, s)
	}
	return splitLedger(sets, host, w, sc, out)
}

// ledgerScratch is the storage stepLedger reuses from step to step: a
// step's interval sets are garbage once its ledger is encoded, and made
// afresh per step they were 450 MB of allocation at 1 M kernels, garbage
// the collector chased under the analysis's soft limit (issue 27).
type ledgerScratch struct {
	// sets holds the GPU sources' intervals (the host sources' are the
	// ledger index's own); segs each line's intervals, in
	// ledgerLineOrder; left and next what splitLedger has not yet
	// assigned; win a window's peer-wait intervals; enc the encoding;
	// host a window's host intervals, merged.
	sets       [nSources][]trace.Span
	host       [nSources][]trace.Span
	segs       [nLedgerLines][]trace.Span
	left, next []trace.Span
	win        []trace.Span
	enc        []byte
}

// appendInWindow appends the parts of sorted, disjoint spans inside w,
// found by binary search, to dst.
func appendInWindow(dst []trace.Span, spans []interval.Bounds, w trace.Span) []trace.Span {
	lo, _ := slices.BinarySearchFunc(spans, w.Start, func(s interval.Bounds, at trace.Time) int { return cmp.Compare(s.End, at+1) })
	for _, s := range spans[lo:] {
		if s.Start >= w.End {
			break
		}
		if p := (trace.Span{Start: max(s.Start, w.Start), End: min(s.End, w.End)}); p.End > p.Start {
			dst = append(dst, p)
		}
	}
	return dst
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
// turn, one linear merge per source. The GPU sources' intervals are in
// sets, the host's in host; each line's intervals are left in sc.segs,
// its time appended to out.
func splitLedger(sets, host *[nSources][]trace.Span, w trace.Span, sc *ledgerScratch, out []LedgerEntry) []LedgerEntry {
	for k := range sc.segs {
		sc.segs[k] = sc.segs[k][:0]
	}
	left, next := append(sc.left[:0], w), sc.next
	for s := range sets {
		set := sets[s]
		if s >= int(srcSync) {
			set = host[s]
		}
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
// a length: appendIntersect's and a subtraction's answers in one merge,
// which stops where b ends.
func appendSplit(in, rest, a, b []trace.Span) ([]trace.Span, []trace.Span) {
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

// unionInOrder is unionSpans, without the sort when spans are in start
// order already (a step's work on one stream): one merge. The union's
// intervals may carry another of the merged spans' names than
// unionSpans' would; the ledger's intervals carry none.
func unionInOrder(spans []trace.Span) []trace.Span {
	if !slices.IsSortedFunc(spans, func(a, b trace.Span) int { return cmp.Compare(a.Start, b.Start) }) {
		return unionSpans(spans)
	}
	merged := spans[:0]
	for _, s := range spans {
		if n := len(merged); n > 0 && s.Start <= merged[n-1].End {
			merged[n-1].End = max(merged[n-1].End, s.End)
			continue
		}
		merged = append(merged, s)
	}
	return merged
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

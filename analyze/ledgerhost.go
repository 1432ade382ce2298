package analyze

import (
	"cmp"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/trace"
)

// The families of host intervals the ledger reads. Each comes in its own
// start order (a thread's events in start order, the threads one after
// the other), so each is merged into its own union as it is read; the
// families' unions are merged after.
const (
	famCalls   = iota // the sync and launch API calls
	famCopies         // the outermost copy ops around memcpy launches
	famCompile        // the compilation spans
	famOps            // the framework ops
	famRanges         // the host's record_function ranges
	famFrames         // the Python frames
	nFamilies
)

// hostRuns is a family's intervals per source, each merged into the last
// one kept when it starts inside it: intervals in start order, nested
// ones (a frame's callees, an op's children) inside the last, end as
// their union without being stored, grown or sorted.
type hostRuns struct {
	spans [nSources][]interval.Bounds
	// unsorted says an interval started before the last one kept (a
	// second thread's): the spans are then merged by union.
	unsorted [nSources]bool
}

// add merges b into the source's intervals.
func (u *hostRuns) add(src ledgerSource, b interval.Bounds) {
	l := u.spans[src]
	if n := len(l); n > 0 {
		if last := &l[n-1]; b.Start >= last.Start {
			if b.Start <= last.End {
				last.End = max(last.End, b.End)
				return
			}
		} else {
			u.unsorted[src] = true
		}
	}
	u.spans[src] = append(l, b)
}

// within reports whether [start, end) lies inside the source's last
// interval kept.
func (u *hostRuns) within(src ledgerSource, start, end trace.Time) bool {
	l := u.spans[src]
	n := len(l)
	return n > 0 && start >= l[n-1].Start && end <= l[n-1].End
}

// longPart is an interval of a source that does not keep enclosing
// intervals which encloses a window: cut window by window after the
// scan (fileLong).
type longPart struct {
	src ledgerSource
	b   interval.Bounds
}

// hostScan is one part of the host's intervals, read: every family's
// runs and the long intervals met, in their order.
type hostScan struct {
	li   *ledgerIndex
	fam  [nFamilies]hostRuns
	long []longPart
}

// file adds host interval [start, end) of source src to runs u, or to
// the long intervals when src does not keep an interval enclosing a
// window and it encloses one. An interval that has no length or lies
// outside every window adds nothing to any step's union and is dropped.
func (sc *hostScan) file(u *hostRuns, src ledgerSource, start, end trace.Time) {
	li := sc.li
	if end <= start || end <= li.starts[0] || start >= li.reach[len(li.reach)-1] {
		return
	}
	b := interval.Bounds{Start: start, End: end}
	if !keepsEnclosing(src) && li.enclosesWindow(b) {
		sc.long = append(sc.long, longPart{src, b})
		return
	}
	u.add(src, b)
}

// fileUncovered files [start, end) as file does unless it lies outside
// every window, inside the last interval kept of its source or inside
// one of in's (the union so far), where it adds nothing.
func (sc *hostScan) fileUncovered(u *hostRuns, in *[nSources]unionCursor, src ledgerSource, start, end trace.Time) {
	li := sc.li
	if end > start && end > li.starts[0] && start < li.reach[len(li.reach)-1] && !u.within(src, start, end) && !in[src].covers(start, end) {
		sc.file(u, src, start, end)
	}
}

// enclosesWindow reports whether b encloses one of li's windows that has
// a length: one starting at or after b's start ends at or before its end.
func (li *ledgerIndex) enclosesWindow(b interval.Bounds) bool {
	if trace.Duration(b.End-b.Start) < li.minLen {
		return false
	}
	k, _ := slices.BinarySearch(li.starts, b.Start)
	return k < len(li.starts) && li.minEnd[k] <= b.End
}

// minHostPart is the fewest host intervals worth a part of their own.
const minHostPart = 1 << 15

// fileHostWork reads the host's intervals into li's unions: the Python
// frames first, then the API calls (syncs, launches), the copy ops,
// compilation, the ops and ranges (up to millions of intervals), each
// family in parts side by side; each source's union is the union of its
// parts' and families', and the long intervals are cut window by window.
// An op inside the frames' union of its source adds nothing to it (the
// ops run inside the Python calls that made them): left out, the ops'
// own union is a few intervals, not one per top-level op (170 k). A union
// is one answer whatever the parts, so the index is the same on any
// number of cores.
func (ix *index) fileHostWork(li *ledgerIndex) {
	if len(li.win) == 0 {
		return
	}
	t := ix.t
	li.callDur = make([]trace.Duration, len(t.APICalls))
	parts := max(min(runtime.GOMAXPROCS(0), (len(t.APICalls)+len(t.Ops)+len(t.Frames))/minHostPart), 1)
	scans := make([]hostScan, parts)
	inParts(parts, func(k int) {
		scans[k].li = li
		ix.scanFrames(&scans[k], k, parts)
	})
	li.joinScans(scans)
	opSrc := byName(&ix.host.ops, func(n string) ledgerSource { return hostRangeSource(n, false) })
	transfer := byName(&ix.host.ops, func(n string) bool { return transferOps[n] })
	scans = make([]hostScan, parts)
	inParts(parts, func(k int) {
		scans[k].li = li
		ix.scanCalls(&scans[k], k, parts, transfer)
		ix.scanOps(&scans[k], k, parts, opSrc)
	})
	li.joinScans(scans)
}

// inParts calls fn with each of parts side by side (on this goroutine
// for one), and returns when all are done.
func inParts(parts int, fn func(k int)) {
	if parts == 1 {
		fn(0)
		return
	}
	var wg sync.WaitGroup
	for k := range parts {
		wg.Go(func() { fn(k) })
	}
	wg.Wait()
}

// share is part k of parts of n items.
func share(n, k, parts int) (lo, hi int) {
	return n * k / parts, n * (k + 1) / parts
}

// scanCalls reads part k of the sync and launch calls (as the Launches
// fact classified them), of the copy ops around memcpy launches and of
// the compilation spans.
func (ix *index) scanCalls(sc *hostScan, k, parts int, transfer []bool) {
	t, ops := ix.t, &ix.host.ops
	calls, copies := &sc.fam[famCalls], &sc.fam[famCopies]
	lo, hi := share(len(t.APICalls), k, parts)
	// The launches are most calls, each its own interval: their room
	// is made once (grown by doubling, a megabyte list was copied and
	// faulted in again and again).
	n := 0
	for i := lo; i < hi; i++ {
		if ix.launch[i] && !ix.sync[i] {
			n++
		}
	}
	calls.spans[srcLaunch] = make([]interval.Bounds, 0, n)
	copyCat := -1 // a memcpy's category: no other activity is a memcpy
	if ix.CategoryFacts != nil {
		copyCat = ix.categoryID(CategoryCopy)
	}
	lastTop := trace.None
	for i := lo; i < hi; i++ {
		c := &t.APICalls[i]
		switch {
		case ix.sync[i]:
			sc.file(calls, srcSync, c.Start, c.End)
			sc.li.callDur[i] = c.Dur()
		case ix.launch[i]:
			sc.file(calls, srcLaunch, c.Start, c.End)
			sc.li.callDur[i] = c.Dur()
		}
		g := c.FirstGPU
		if g == trace.None || c.Op == trace.None || ix.CategoryFacts != nil && int(ix.cat[g]) != copyCat || t.GPU[g].Kind != trace.Memcpy {
			continue
		}
		// The host's part of a copy (which a pinned, batched or
		// non-blocking copy removes, not launch overhead): the
		// outermost of the copy ops around the launch. A copy's calls
		// come one after the other, so its op is filed once.
		top := trace.None
		for op := c.Op; op != trace.None && transfer[ops.name[op]]; op = ops.parent[op] {
			top = op
		}
		if top != trace.None && top != lastTop {
			sc.file(copies, srcSync, ops.start[top], ops.end[top])
			lastTop = top
		}
	}
	spans := ix.CompileFacts.spans
	lo, hi = share(len(spans), k, parts)
	for _, s := range spans[lo:hi] {
		sc.file(&sc.fam[famCompile], srcCompile, s.Start, s.End)
	}
}

// scanOps reads part k of the host's ops (from the HostTable's columns,
// each distinct name classified once, opSrc) and ranges into the
// data-loading, profiler and framework sources. An op inside the union
// so far (the frames') of its source is left out.
func (ix *index) scanOps(sc *hostScan, k, parts int, opSrc []ledgerSource) {
	t, ops := ix.t, &ix.host.ops
	u := &sc.fam[famOps]
	var in [nSources]unionCursor
	for src := range in {
		in[src] = unionCursor{spans: sc.li.union[src], j: -1}
	}
	lo, hi := share(len(ops.name), k, parts)
	for i := lo; i < hi; i++ {
		sc.fileUncovered(u, &in, opSrc[ops.name[i]], ops.start[i], ops.end[i])
	}
	// A range's name is classified once (a step's ranges repeat the
	// last step's names): the compilation test and the source in one.
	rangeSrc := sourceByName{classify: func(n string) ledgerSource {
		if strings.HasPrefix(n, "ProfilerStep#") || compileEvent(n) {
			return nSources
		}
		return hostRangeSource(n, true)
	}}
	lo, hi = share(len(t.Annotations), k, parts)
	for i := lo; i < hi; i++ {
		if a := &t.Annotations[i]; !a.GPU && a.End > a.Start {
			if src := rangeSrc.of(a.Name); src != nSources {
				sc.file(&sc.fam[famRanges], src, a.Start, a.End)
			}
		}
	}
}

// scanFrames reads part k of the host's Python frames into the
// data-loading, profiler and framework sources. A frame inside the last
// one kept of its source (a callee, most frames of a deep stack) is left
// out.
func (ix *index) scanFrames(sc *hostScan, k, parts int) {
	t := ix.t
	u := &sc.fam[famFrames]
	frameSrc := sourceByName{classify: frameSource}
	// A frame outside every window is passed over before its name is
	// classified: a compilation's millions of frames before the steps
	// are most of some traces'.
	from, to := sc.li.starts[0], sc.li.reach[len(sc.li.reach)-1]
	lo, hi := share(len(t.Frames), k, parts)
	frames := t.Frames[lo:hi]
	for i := range frames {
		fr := &frames[i]
		if fr.Start >= to || fr.End <= max(from, fr.Start) {
			continue
		}
		if src := frameSrc.of(fr.Name); !u.within(src, fr.Start, fr.End) {
			sc.file(u, src, fr.Start, fr.End)
		}
	}
}

// unionCursor finds the interval of a sorted, disjoint union around an
// interval, for intervals that mostly come in start order: from the last
// answer, without a search each.
type unionCursor struct {
	spans []interval.Bounds
	// j is the last interval starting at or before the last start
	// asked (-1: none).
	j int
}

// covers reports whether [start, end) lies inside one of c's intervals.
func (c *unionCursor) covers(start, end trace.Time) bool {
	s, j := c.spans, c.j
	switch {
	case j+1 < len(s) && s[j+1].Start <= start:
		if j++; j+1 < len(s) && s[j+1].Start <= start {
			j = c.search(start)
		}
	case j >= 0 && s[j].Start > start:
		j = c.search(start)
	}
	c.j = j
	return j >= 0 && end <= s[j].End
}

// search returns the last of c's intervals starting at or before at, or
// -1.
func (c *unionCursor) search(at trace.Time) int {
	k, _ := slices.BinarySearchFunc(c.spans, at+1, func(b interval.Bounds, t trace.Time) int { return cmp.Compare(b.Start, t) })
	return k - 1
}

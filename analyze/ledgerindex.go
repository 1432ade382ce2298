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

// ledgerIndex is what the ledger reads, built once per trace: the host
// intervals of each source already cut into the step windows they touch
// (one pass over the host events, no global sort), and the GPU intervals
// that are not a step's own.
type ledgerIndex struct {
	win []trace.Span
	// order lists the windows by start; reach[i] is the latest end of
	// the windows order[0..i], so the windows an interval touches are
	// found by binary search and a short walk back.
	// starts[i] is window order[i]'s start, searched without the
	// indirection (a search per host interval, a million on a
	// hook-heavy trace).
	order  []int
	starts []trace.Time
	reach  []trace.Time
	// host holds, per window and host source, the parts of the source's
	// intervals inside the window (not yet merged); nil for a window
	// without any, so a trace without host events holds 8 bytes a step,
	// not 13 slices (31 MB at 100 k steps, issue 27). The parts have no
	// name, so they are Bounds: half a Span's bytes to grow and sort,
	// and nothing for the collector to scan.
	host []*[nSources][]interval.Bounds
	// other and before are the GPU busy intervals of work with a launch
	// (or a step) and of work launched before profiling began; peerWait
	// is Config.PeerWait. Each is sorted and disjoint.
	// They are Bounds, the GPU's busy intervals' own type, so other can
	// be the busy union itself.
	other, before, peerWait []interval.Bounds
}

// keepsEnclosing says which host sources keep an interval that encloses a
// whole window: a sync call, a launch or a compilation longer than the
// step is the step's time; a function or range around the whole step
// (main(), the loop) says nothing about it.
func keepsEnclosing(src ledgerSource) bool {
	return src == srcSync || src == srcLaunch || src == srcCompile
}

func (ix *index) newLedgerIndex(windows []trace.Span) *ledgerIndex {
	t := ix.t
	li := &ledgerIndex{win: windows, host: make([]*[nSources][]interval.Bounds, len(windows))}
	li.order = make([]int, len(windows))
	for i := range li.order {
		li.order[i] = i
	}
	slices.SortStableFunc(li.order, func(a, b int) int { return cmp.Compare(windows[a].Start, windows[b].Start) })
	li.starts = make([]trace.Time, len(windows))
	li.reach = make([]trace.Time, len(windows))
	for i, w := range li.order {
		li.starts[i] = windows[w].Start
		li.reach[i] = windows[w].End
		if i > 0 {
			li.reach[i] = max(li.reach[i], li.reach[i-1])
		}
	}
	ix.fileHostWork(li)
	// Counted first, then filled: appended one by one, a million spans
	// left up to twice their size in garbage behind (issue 27).
	nBefore := 0
	for g := range t.GPU {
		if ix.gpuStep[g] < 0 && t.GPU[g].Launch == trace.None {
			nBefore++
		}
	}
	li.peerWait = interval.BoundsOf(unionSpans(slices.Clone(ix.peerWait)))
	if nBefore == 0 {
		if busy, ok := ix.soleBusy(); ok {
			// The common case: one device, all its work in steps (or
			// launched), no empty activity standing alone. Then other
			// is that device's busy union, so it is shared, not built
			// again (32 MB at 1 M kernels, issue 27).
			li.other = busy
			return li
		}
	}
	before := make([]trace.Span, 0, nBefore)
	other := make([]trace.Span, 0, len(t.GPU)-nBefore)
	for g := range t.GPU {
		a := &t.GPU[g]
		if a.End <= a.Start {
			continue
		}
		if ix.gpuStep[g] < 0 && a.Launch == trace.None {
			before = append(before, a.Span)
		} else {
			other = append(other, a.Span)
		}
	}
	li.other, li.before = interval.BoundsOf(unionSpans(other)), interval.BoundsOf(unionSpans(before))
	return li
}

// soleBusy returns the busy union of the trace's only device and true
// when every interval in it has a length: it is then the union of the
// GPU activities that have one (an empty one inside a busy interval
// changes nothing, one alone would be a point here). Callers must not
// modify it.
func (ix *index) soleBusy() ([]interval.Bounds, bool) {
	if ix.BusyFacts == nil || len(ix.BusyFacts.devices) != 1 {
		return nil, false
	}
	busy := ix.BusyFacts.busy[ix.BusyFacts.devices[0]]
	for _, s := range busy {
		if s.End <= s.Start {
			return nil, false
		}
	}
	return busy, true
}

// fileHostWork files the host's intervals under the windows: the API
// calls (syncs, launches), compilation and copy ops, the ops and ranges,
// the Python frames (up to millions of intervals, each a binary search
// over the windows), side by side. With many windows (thousands of
// steps) they are split in start order between the workers: each walks
// every interval, skips at once those outside its windows' time range and
// files the rest under its own windows. With few windows (the usual
// handful of profiled steps) the intervals are split instead, each part
// filed into its own table, appended after: a step's lists are unions to
// be, so their order does not matter.
func (ix *index) fileHostWork(li *ledgerIndex) {
	n := len(li.order)
	if n == 0 {
		return
	}
	copies := copyOpSpans(ix.t)
	workers := runtime.GOMAXPROCS(0)
	chunked := workers == 1 || n >= minChunk*workers
	// A filer per run of windows reads every interval near its windows;
	// two filers reading all of them cost what summing them up in blocks
	// first does, so blocks are for three and more.
	blocks := &hostBlocks{}
	if chunked && workers > 2 {
		blocks = ix.hostBlocks()
	}
	all := func(f *hostFiler) {
		ix.fileCalls(f, copies)
		ix.fileOps(f)
		ix.fileFrames(f)
	}
	if chunked {
		inChunks(n, func(lo, hi int) {
			all(&hostFiler{li: li, blocks: blocks, host: li.host, lo: lo, hi: hi, from: li.win[li.order[lo]].Start, to: li.reach[hi-1], parts: 1})
		})
		return
	}
	tables := make([][]*[nSources][]interval.Bounds, workers)
	var wg sync.WaitGroup
	for k := range tables {
		tables[k] = li.host
		if k > 0 {
			tables[k] = make([]*[nSources][]interval.Bounds, n)
		}
		wg.Go(func() {
			all(&hostFiler{li: li, blocks: blocks, host: tables[k], lo: 0, hi: n, from: li.win[li.order[0]].Start, to: li.reach[n-1], part: k, parts: workers})
		})
	}
	wg.Wait()
	for _, table := range tables[1:] {
		for wi, h := range table {
			if h == nil {
				continue
			}
			if li.host[wi] == nil {
				li.host[wi] = new([nSources][]interval.Bounds)
			}
			for src, spans := range h {
				li.host[wi][src] = append(li.host[wi][src], spans...)
			}
		}
	}
}

// hostFiler files host intervals into host under the windows
// li.order[lo:hi], whose starts are at or after from and whose ends are
// at most to, taking part of every parts of each family's intervals.
type hostFiler struct {
	li *ledgerIndex
	// blocks sum up the families of intervals, so that a filer reads
	// only those near its windows.
	blocks      *hostBlocks
	host        []*[nSources][]interval.Bounds
	lo, hi      int
	from, to    trace.Time
	part, parts int
	// next is the last interval's end's place among the windows' starts
	// (see before).
	next int
	// cover is, per source, the last interval filed whole (no window
	// left out for enclosing it; covered says there is one): an
	// interval inside it adds nothing to the union stepLedger takes,
	// and is not filed (the frames and ops nested in the last one, most
	// of a deep stack's).
	cover   [nSources]interval.Bounds
	covered [nSources]bool
}

// before returns the index (in li.order, between lo and hi) of f's first
// window starting at or after end. Intervals come in start order and
// mostly end near the last one: the last answer, when it still holds,
// spares the search.
func (f *hostFiler) before(end trace.Time) int {
	starts, i := f.li.starts, f.next
	if i < f.lo || i > f.hi || i > f.lo && starts[i-1] >= end || i < f.hi && starts[i] < end {
		k, _ := slices.BinarySearch(starts[f.lo:f.hi], end)
		i = f.lo + k
	}
	f.next = i
	return i
}

// span is the part of n intervals this filer walks.
func (f *hostFiler) span(n int) (from, to int) {
	return n * f.part / f.parts, n * (f.part + 1) / f.parts
}

// touches reports whether s can overlap one of f's windows: cheap, so an
// interval elsewhere is not classified or searched for.
func (f *hostFiler) touches(s trace.Span) bool {
	return s.End > s.Start && s.End > f.from && s.Start < f.to
}

// add files host interval s of source src under every window of f's it
// touches: the part inside the window, or, for an interval enclosing the
// whole window, the window itself when the source keeps enclosing
// intervals.
func (f *hostFiler) add(src ledgerSource, s trace.Span) {
	if !f.touches(s) {
		return
	}
	if c := f.cover[src]; f.covered[src] && s.Start >= c.Start && s.End <= c.End {
		return
	}
	li := f.li
	whole := true
	// f's windows starting before s ends, walked back while one of them
	// can still reach past s's start.
	for i := f.before(s.End) - 1; i >= f.lo && li.reach[i] > s.Start; i-- {
		wi := li.order[i]
		w := li.win[wi]
		if s.Start >= w.End || s.End <= w.Start {
			continue
		}
		part := interval.Bounds{Start: max(s.Start, w.Start), End: min(s.End, w.End)}
		if s.Start <= w.Start && s.End >= w.End && !keepsEnclosing(src) {
			whole = false
			continue
		}
		if f.host[wi] == nil {
			f.host[wi] = new([nSources][]interval.Bounds)
		}
		parts := &f.host[wi][src]
		// Each family's intervals come in start order, nested ones
		// (frames, ops and their children) inside the last: merged into
		// it, they are never stored, grown or sorted. Merging two that
		// overlap or touch keeps the union stepLedger takes.
		if n := len(*parts); n > 0 && part.Start >= (*parts)[n-1].Start && part.Start <= (*parts)[n-1].End {
			(*parts)[n-1].End = max((*parts)[n-1].End, part.End)
			continue
		}
		if *parts == nil {
			*parts = make([]interval.Bounds, 0, f.capHint(i, src))
		}
		*parts = append(*parts, part)
	}
	if whole {
		f.cover[src], f.covered[src] = interval.Bounds{Start: s.Start, End: s.End}, true
	}
}

// capHint is the room to make for the parts of source src under f's
// window order[i]: a little more than the window before it holds (the
// steps of a loop are alike), so a step's hundred parts are not grown
// from one by doubling (a sixth of the filing's time on a 2,205-step
// trace); 0 (append's own growth) for the first window.
func (f *hostFiler) capHint(i int, src ledgerSource) int {
	if i <= f.lo {
		return 0
	}
	prev := f.host[f.li.order[i-1]]
	if prev == nil {
		return 0
	}
	n := len(prev[src])
	return n + n/8
}

// fileCalls adds the sync and launch calls, compilation and the ops that
// copy (copies, a sync).
func (ix *index) fileCalls(f *hostFiler, copies []trace.Span) {
	t := ix.t
	lo, hi := f.span(len(t.APICalls))
	f.blocks.calls.runs(lo, hi, f.from, f.to, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			c := &t.APICalls[i]
			if !f.touches(c.Span) {
				continue
			}
			switch { // as the Launches fact classified the call
			case ix.sync[i]:
				f.add(srcSync, c.Span)
			case ix.launch[i]:
				f.add(srcLaunch, c.Span)
			}
		}
	})
	lo, hi = f.span(len(ix.CompileFacts.spans))
	for _, s := range ix.CompileFacts.spans[lo:hi] {
		f.add(srcCompile, s)
	}
	lo, hi = f.span(len(copies))
	for _, s := range copies[lo:hi] {
		f.add(srcSync, s)
	}
}

// fileOps adds the host's ops and ranges to the data-loading, profiler
// and framework sources. The ops are read from the HostTable's columns,
// each distinct name classified once.
func (ix *index) fileOps(f *hostFiler) {
	t, ops := ix.t, &ix.host.ops
	opSrc := byName(ops, func(n string) ledgerSource { return hostRangeSource(n, false) })
	lo, hi := f.span(len(ops.name))
	f.blocks.ops.runs(lo, hi, f.from, f.to, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if s := (trace.Span{Start: ops.start[i], End: ops.end[i]}); f.touches(s) {
				f.add(opSrc[ops.name[i]], s)
			}
		}
	})
	lo, hi = f.span(len(t.Annotations))
	for i := lo; i < hi; i++ {
		if a := &t.Annotations[i]; !a.GPU && f.touches(a.Span) && !strings.HasPrefix(a.Name, "ProfilerStep#") && !compileEvent(a.Name) {
			f.add(hostRangeSource(a.Name, true), a.Span)
		}
	}
}

// fileFrames adds the host's Python frames to the data-loading, profiler
// and framework sources.
func (ix *index) fileFrames(f *hostFiler) {
	t := ix.t
	frameSrc := sourceByName{classify: frameSource}
	lo, hi := f.span(len(t.Frames))
	f.blocks.frames.runs(lo, hi, f.from, f.to, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if fr := &t.Frames[i]; f.touches(fr.Span) {
				f.add(frameSrc.of(fr.Name), fr.Span)
			}
		}
	})
}

// stepLedger splits window i (step i's) into its lines, returning each
// line's time; each line's intervals are left in sc.segs.
func (ix *index) stepLedger(li *ledgerIndex, own []trace.Index, i int, sc *ledgerScratch) []LedgerEntry {
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
		sets[s] = clipSpans(unionSpans(sets[s]), w)
	}
	// Waiting is the step's own communication kernels' spin: the part of
	// them inside the peer-wait intervals.
	sc.win = appendInWindow(sc.win[:0], li.peerWait, w)
	sets[srcPeerWait] = appendIntersect(sets[srcPeerWait], sets[srcComm], sc.win)
	sets[srcOther] = appendInWindow(sets[srcOther], li.other, w)
	sets[srcBefore] = appendInWindow(sets[srcBefore], li.before, w)
	host := &sc.host
	for s := srcSync; s < nSources; s++ {
		host[s] = host[s][:0]
		if li.host[i] == nil {
			continue
		}
		// The host's intervals are merged where they lie (li's, kept
		// for this step alone); only their union, far shorter, is
		// copied out.
		for _, b := range interval.UnionBounds(li.host[i][s]) {
			host[s] = append(host[s], b.Span())
		}
	}
	return splitLedger(sets, host, w, sc)
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
// sets, the host's in host; each line's intervals are left in sc.segs.
func splitLedger(sets, host *[nSources][]trace.Span, w trace.Span, sc *ledgerScratch) []LedgerEntry {
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
		if sc.segs[k] = appendIntersect(sc.segs[k], left, set); len(sc.segs[k]) > n {
			next = appendSubtract(next[:0], left, set)
			left, next = next, left
		}
	}
	sc.segs[lineIdle] = append(sc.segs[lineIdle], left...)
	sc.left, sc.next = left, next
	out := make([]LedgerEntry, 0, nLedgerLines)
	for k, line := range ledgerLineOrder {
		v := sc.segs[k]
		if len(v) > 1 {
			// Two sources of one line (compilation on the host and its
			// autotuning on the GPU) or adjacent parts: one sorted union.
			v = unionSpans(v)
			sc.segs[k] = v
		}
		out = append(out, LedgerEntry{Line: line, Us: us(spansDuration(v))})
	}
	return out
}

package analyze

import (
	"cmp"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// The lines of a step's ledger (LedgerEntry.Line), in display order. Every
// instant of a step's wall time is in exactly one line: the first, in the
// order of ledgerSources, whose intervals cover it. GPU lines come first
// (the GPU running the step's own work is what the step is for; the host
// work hidden under it costs nothing), then the GPU busy with work the
// step did not launch, then, while the GPU is idle, what the host was
// doing.
const (
	// LineGPUCompute is the GPU running kernels the step launched (by
	// correlation id: whichever stream, whenever they run), other than
	// communication, copies and autotuning.
	LineGPUCompute = "gpu_compute"
	// LineCommunication is the GPU running only the step's communication
	// kernels (NCCL/RCCL): communication not hidden under compute.
	LineCommunication = "communication"
	// LineCopies is the GPU running only the step's memcpys and memsets.
	LineCopies = "copies"
	// LineCompile is torch.compile's own work: its autotuner's benchmark
	// launches on the GPU and, while the GPU is idle, the host compiling.
	LineCompile = "compile_autotune"
	// LineOtherSteps is the GPU busy with work another step (or code
	// outside every step) launched: the tail of the previous step still
	// running, so this step's work queues behind it.
	LineOtherSteps = "other_steps_gpu"
	// LineBeforeProfile is the GPU busy with work whose launch is not in
	// the trace: it was queued before the profiler started.
	LineBeforeProfile = "queued_before_profile"
	// LineHostSync is the GPU idle while the host is blocked in a
	// synchronising call.
	LineHostSync = "host_sync"
	// LineDataLoading is the GPU idle while the host loads data
	// (DataLoader frames, data-named ranges and functions, pin_memory).
	LineDataLoading = "data_loading"
	// LineProfiler is the GPU idle while the host runs the profiler's own
	// code (torch.profiler frames, the profiler's bracketed ranges).
	LineProfiler = "profiler_overhead"
	// LineLaunch is the GPU idle while the host is inside launch calls.
	LineLaunch = "launch_overhead"
	// LineFramework is the GPU idle while the host runs framework ops,
	// record_function ranges or Python code.
	LineFramework = "framework_host"
	// LineIdle is the GPU idle while the trace records nothing the host
	// did: idle that nothing explains.
	LineIdle = "idle"
)

// LedgerLines returns every ledger line in display order.
func LedgerLines() []string {
	return []string{LineGPUCompute, LineCommunication, LineCopies, LineCompile, LineOtherSteps, LineBeforeProfile,
		LineHostSync, LineDataLoading, LineProfiler, LineLaunch, LineFramework, LineIdle}
}

// LedgerLineText names a ledger line in words, for tables and legends.
func LedgerLineText(line string) string {
	switch line {
	case LineGPUCompute:
		return "GPU compute"
	case LineCommunication:
		return "exposed communication"
	case LineCopies:
		return "copies"
	case LineCompile:
		return "compile & autotune"
	case LineOtherSteps:
		return "GPU busy with other steps' work"
	case LineBeforeProfile:
		return "GPU work queued before profiling"
	case LineHostSync:
		return "host blocked in sync"
	case LineDataLoading:
		return "data loading"
	case LineProfiler:
		return "profiler overhead"
	case LineLaunch:
		return "launch overhead"
	case LineFramework:
		return "framework / Python host"
	case LineIdle:
		return "unexplained idle"
	}
	return line
}

// gpuIdleLines are the lines in which the GPU is idle: what removing host
// overhead can save.
var gpuIdleLines = []string{LineCompile, LineHostSync, LineDataLoading, LineProfiler, LineLaunch, LineFramework, LineIdle}

// gpuBusyLines are the lines of the step's own GPU work: what faster or
// fewer kernels and copies can save.
var gpuBusyLines = []string{LineGPUCompute, LineCommunication, LineCopies}

// LedgerEntry is one line of a step's ledger: the time of the step's wall
// in that line.
type LedgerEntry struct {
	Line string  `json:"line"`
	Us   float64 `json:"us"`
}

// ledgerSource is one kind of interval the ledger is built from, in
// priority order: the line it counts towards.
type ledgerSource uint8

const (
	srcAutotune ledgerSource = iota
	srcCompute
	srcComm
	srcCopy
	srcOther
	srcBefore
	srcSync
	srcCompile
	srcData
	srcProfiler
	srcLaunch
	srcFramework
	nSources
)

var sourceLine = [nSources]string{LineCompile, LineGPUCompute, LineCommunication, LineCopies, LineOtherSteps, LineBeforeProfile,
	LineHostSync, LineCompile, LineDataLoading, LineProfiler, LineLaunch, LineFramework}

// spanIndex holds host intervals sorted by start and by end, so the part
// of them inside a window is found by binary search.
type spanIndex struct {
	byStart, byEnd [][2]trace.Time
	// keepEnclosing keeps intervals that enclose the whole window (a sync
	// call longer than the step); host functions and ranges around the
	// whole step (main(), the loop) say nothing about it and are left out.
	keepEnclosing bool
}

func (x *spanIndex) add(s trace.Span) {
	if s.End > s.Start {
		x.byStart = append(x.byStart, [2]trace.Time{s.Start, s.End})
	}
}

func (x *spanIndex) seal() {
	slices.SortFunc(x.byStart, func(a, b [2]trace.Time) int { return cmp.Compare(a[0], b[0]) })
	x.byEnd = slices.Clone(x.byStart)
	slices.SortFunc(x.byEnd, func(a, b [2]trace.Time) int { return cmp.Compare(a[1], b[1]) })
}

// in returns the union of the intervals inside w (clipped to it).
func (x *spanIndex) in(w trace.Span) []trace.Span {
	var out []trace.Span
	lo, _ := slices.BinarySearchFunc(x.byStart, w.Start, func(a [2]trace.Time, at trace.Time) int { return cmp.Compare(a[0], at) })
	for i := lo; i < len(x.byStart) && x.byStart[i][0] < w.End; i++ {
		if s := x.byStart[i]; x.keepEnclosing || s[0] > w.Start || s[1] < w.End {
			out = append(out, trace.Span{Start: s[0], End: min(s[1], w.End)})
		}
	}
	// Intervals that began before the window and end inside it.
	lo, _ = slices.BinarySearchFunc(x.byEnd, w.Start+1, func(a [2]trace.Time, at trace.Time) int { return cmp.Compare(a[1], at) })
	for i := lo; i < len(x.byEnd) && x.byEnd[i][1] <= w.End; i++ {
		if s := x.byEnd[i]; s[0] < w.Start && (x.keepEnclosing || s[1] < w.End) {
			out = append(out, trace.Span{Start: w.Start, End: s[1]})
		}
	}
	if x.keepEnclosing && len(x.byEnd) > 0 {
		// Intervals around the whole window: few (long sync calls), found
		// among those ending after it.
		hi, _ := slices.BinarySearchFunc(x.byEnd, w.End+1, func(a [2]trace.Time, at trace.Time) int { return cmp.Compare(a[1], at) })
		for i := hi; i < len(x.byEnd); i++ {
			if s := x.byEnd[i]; s[0] < w.Start {
				out = append(out, w)
				break
			}
		}
	}
	return unionSpans(out)
}

// ledgerIndex is what the ledger reads, built once per trace.
type ledgerIndex struct {
	host [nSources]*spanIndex
	// other and before are the GPU busy intervals of work with a launch
	// (or a step) and of work launched before profiling began.
	other, before []trace.Span
}

func (ix *index) newLedgerIndex() *ledgerIndex {
	t := ix.t
	li := &ledgerIndex{}
	for s := srcSync; s < nSources; s++ {
		li.host[s] = &spanIndex{keepEnclosing: s == srcSync || s == srcLaunch || s == srcCompile}
	}
	for i := range t.APICalls {
		c := &t.APICalls[i]
		switch {
		case isSyncCall(c.Name):
			li.host[srcSync].add(c.Span)
		case isLaunchCall(c):
			li.host[srcLaunch].add(c.Span)
		}
	}
	for _, s := range ix.CompileFacts.spans {
		li.host[srcCompile].add(s)
	}
	ix.ledgerHostWork(li)
	for s := srcSync; s < nSources; s++ {
		li.host[s].seal()
	}
	for g := range t.GPU {
		a := &t.GPU[g]
		if a.End <= a.Start {
			continue
		}
		if ix.gpuStep[g] < 0 && a.Launch == trace.None {
			li.before = append(li.before, a.Span)
		} else {
			li.other = append(li.other, a.Span)
		}
	}
	li.other, li.before = unionSpans(li.other), unionSpans(li.before)
	return li
}

// ledgerHostWork adds the host's ops, ranges and Python frames to the
// data-loading, profiler and framework sources.
func (ix *index) ledgerHostWork(li *ledgerIndex) {
	t := ix.t
	for i := range t.Ops {
		li.host[hostRangeSource(t.Ops[i].Name, false)].add(t.Ops[i].Span)
	}
	for i := range t.Annotations {
		if a := &t.Annotations[i]; !a.GPU && !strings.HasPrefix(a.Name, "ProfilerStep#") && !compileEvent(a.Name) {
			li.host[hostRangeSource(a.Name, true)].add(a.Span)
		}
	}
	for i := range t.Frames {
		f := &t.Frames[i]
		file, _, fn, ok := f.Source()
		switch {
		case ok && strings.Contains(file, "torch/profiler/") || strings.Contains(file, "torch/autograd/profiler"):
			li.host[srcProfiler].add(f.Span)
		case ok && (libraryCause(file) == CauseDataLoading || !libraryFile(file) && dataName(fn)):
			li.host[srcData].add(f.Span)
		default:
			li.host[srcFramework].add(f.Span)
		}
	}
}

// hostRangeSource is the ledger source an op or (rng) a record_function
// range counts towards: data loading (pin_memory, data-named ranges), the
// profiler's own ranges, or framework host work.
func hostRangeSource(name string, rng bool) ledgerSource {
	switch {
	case strings.Contains(name, "pin_memory") || rng && dataName(name) && !optimizerRange(name):
		return srcData
	case profilerName(name):
		return srcProfiler
	}
	return srcFramework
}

// profilerName reports whether an op or range is the profiler's own
// bookkeeping ("[pytorch|profiler|...]", "## ... ##" markers are not).
func profilerName(name string) bool {
	return strings.HasPrefix(name, "[pytorch|profiler") || strings.HasPrefix(name, "[memory]") ||
		strings.HasPrefix(name, "PyTorch Profiler") || strings.HasPrefix(name, "Record Window End")
}

// stepLedger splits window w of step st into its lines, returning each
// line's time and its intervals.
func (ix *index) stepLedger(li *ledgerIndex, own []trace.Index, w trace.Span) ([]LedgerEntry, map[string][]trace.Span) {
	t := ix.t
	var sets [nSources][]trace.Span
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
		case ix.cat[g] == CategoryCommunication:
			src = srcComm
		}
		sets[src] = append(sets[src], a.Span)
	}
	for s := srcAutotune; s <= srcCopy; s++ {
		sets[s] = clipSpans(unionSpans(sets[s]), w)
	}
	sets[srcOther] = clipSpans(slices.Clone(li.other), w)
	sets[srcBefore] = clipSpans(slices.Clone(li.before), w)
	for s := srcSync; s < nSources; s++ {
		sets[s] = li.host[s].in(w)
	}
	return sweepLedger(sets, w)
}

// sweepLedger puts every instant of w in the first source that covers it
// (LineIdle when none does).
func sweepLedger(sets [nSources][]trace.Span, w trace.Span) ([]LedgerEntry, map[string][]trace.Span) {
	type edge struct {
		at  trace.Time
		src ledgerSource
		d   int8
	}
	var edges []edge
	for s := range sets {
		for _, sp := range sets[s] {
			edges = append(edges, edge{sp.Start, ledgerSource(s), 1}, edge{sp.End, ledgerSource(s), -1})
		}
	}
	slices.SortFunc(edges, func(a, b edge) int { return cmp.Compare(a.at, b.at) })
	var open [nSources]int
	segs := map[string][]trace.Span{}
	ns := map[string]trace.Duration{}
	emit := func(from, to trace.Time) {
		if to <= from {
			return
		}
		line := LineIdle
		for s := range open {
			if open[s] > 0 {
				line = sourceLine[s]
				break
			}
		}
		ns[line] += trace.Duration(to - from)
		v := segs[line]
		if n := len(v); n > 0 && v[n-1].End == from {
			v[n-1].End = to
		} else {
			v = append(v, trace.Span{Start: from, End: to})
		}
		segs[line] = v
	}
	at := w.Start
	for _, e := range edges {
		emit(at, e.at)
		at = max(at, e.at)
		open[e.src] += int(e.d)
	}
	emit(at, w.End)
	out := make([]LedgerEntry, 0, len(LedgerLines()))
	for _, line := range LedgerLines() {
		out = append(out, LedgerEntry{Line: line, Us: us(ns[line])})
	}
	return out, segs
}

// ledgers fills each step's Ledger and StepStats.SteadyLedger, and keeps
// each line's intervals for LedgerSegments.
func (ix *index) ledgers(r *Result, works []stepWork) {
	t := ix.t
	li := ix.newLedgerIndex()
	own := make([][]trace.Index, len(t.Steps))
	for g := range t.GPU {
		if st := ix.gpuStep[g]; st >= 0 {
			own[st] = append(own[st], trace.Index(g))
		}
	}
	r.ledgerSegs = make([]map[string][]trace.Span, len(t.Steps))
	for i := range t.Steps {
		r.Steps[i].Ledger, r.ledgerSegs[i] = ix.stepLedger(li, own[i], works[i].window)
	}
	r.StepStats.SteadyLedger = steadyLedger(r)
}

// steadyLedger is the ledger of "the step": the ledger of the steady
// step with the median wall (the mean of the two middle ones' for an even
// count), so its lines add up to SteadyWallUs, the step every face
// quotes, and each line is what a real step spent.
func steadyLedger(r *Result) []LedgerEntry {
	steady := steadySteps(r)
	steps := make([]*Step, len(steady))
	for i := range steady {
		steps[i] = &steady[i]
	}
	out := make([]LedgerEntry, 0, len(LedgerLines()))
	for _, line := range LedgerLines() {
		out = append(out, LedgerEntry{Line: line})
	}
	if len(steps) == 0 {
		return out
	}
	slices.SortStableFunc(steps, func(a, b *Step) int { return cmp.Compare(a.WallUs, b.WallUs) })
	mid := steps[len(steps)/2 : len(steps)/2+1]
	if len(steps)%2 == 0 {
		mid = steps[len(steps)/2-1 : len(steps)/2+1]
	}
	for _, s := range mid {
		for j := range out {
			if j < len(s.Ledger) {
				out[j].Us += s.Ledger[j].Us / float64(len(mid))
			}
		}
	}
	return out
}

// LedgerSegments returns the intervals (trace clock) that make up line in
// step i (an index into Steps), in time order; nil when none.
func (r *Result) LedgerSegments(i int, line string) []trace.Span {
	if i < 0 || i >= len(r.ledgerSegs) {
		return nil
	}
	return slices.Clone(r.ledgerSegs[i][line])
}

// LedgerUs returns the time of the named lines in ledger l.
func LedgerUs(l []LedgerEntry, lines ...string) float64 {
	var v float64
	for _, e := range l {
		if slices.Contains(lines, e.Line) {
			v += e.Us
		}
	}
	return v
}

// savingLines names the ledger lines a saving out of part from draws on.
func savingLines(from string) []string {
	switch from {
	case FromKernelTime:
		return slices.Clone(gpuBusyLines)
	case FromLaunchGaps, FromHostWaits, FromGPUIdle:
		return slices.Clone(gpuIdleLines)
	}
	return []string{}
}

// SteadyCategory is one kernel category's GPU time in the steady step:
// what the category takes per step once warm-up, compilation and
// torch.compile's autotuning are left out.
type SteadyCategory struct {
	Category string `json:"category"`
	// Us and Count are the mean GPU time and activities per steady step
	// (autotune launches excluded); Share is Us over all categories' Us.
	Us    float64 `json:"us"`
	Count float64 `json:"count"`
	Share float64 `json:"share"`
}

// steadyCategories fills StepStats.SteadyCategories from the activities
// the steady steps launched, autotune launches left out, by time
// descending.
func (ix *index) steadyCategories(r *Result) {
	t := ix.t
	first := 0
	if len(t.Steps) > 1 {
		first = 1 // as steadySteps: the steps after the first
	}
	n := len(t.Steps) - first
	r.StepStats.SteadyCategories = []SteadyCategory{}
	if n <= 0 {
		return
	}
	byCat := map[string]*SteadyCategory{}
	var all float64
	for g := range t.GPU {
		st := int(ix.gpuStep[g])
		if st < first || ix.PhaseFacts.autotune != nil && ix.PhaseFacts.autotune[g] {
			continue
		}
		c := byCat[ix.cat[g]]
		if c == nil {
			c = &SteadyCategory{Category: ix.cat[g]}
			byCat[ix.cat[g]] = c
		}
		d := us(t.GPU[g].Dur()) / float64(n)
		c.Us += d
		c.Count += 1 / float64(n)
		all += d
	}
	for _, cat := range categoryOrder {
		if c := byCat[cat]; c != nil {
			if all > 0 {
				c.Share = c.Us / all
			}
			r.StepStats.SteadyCategories = append(r.StepStats.SteadyCategories, *c)
		}
	}
	slices.SortStableFunc(r.StepStats.SteadyCategories, func(a, b SteadyCategory) int { return cmp.Compare(b.Us, a.Us) })
}

package analyze

import (
	"cmp"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/interval"
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
	// LinePeerWait is, for one rank of a multi-rank run (Config.PeerWait),
	// the GPU running only the step's communication kernels while they
	// wait for the last rank of their collective: NCCL spinning, not work.
	// What fixing the late rank gives back; always 0 for a lone trace.
	LinePeerWait = "peer_wait"
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
	// synchronising call or in a framework copy op that moves data
	// through a memcpy (a pageable copy is synchronous; .item() and
	// .cpu() wait for the GPU): copies and syncs, not launch overhead.
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
	return []string{LineGPUCompute, LineCommunication, LinePeerWait, LineCopies, LineCompile, LineOtherSteps, LineBeforeProfile,
		LineHostSync, LineDataLoading, LineProfiler, LineLaunch, LineFramework, LineIdle}
}

// LedgerLineText names a ledger line in words, for tables and legends.
func LedgerLineText(line string) string {
	switch line {
	case LineGPUCompute:
		return "GPU compute"
	case LineCommunication:
		return "exposed communication"
	case LinePeerWait:
		return "waiting for a peer rank"
	case LineCopies:
		return "copies"
	case LineCompile:
		return "compile & autotune"
	case LineOtherSteps:
		return "GPU busy with other steps' work"
	case LineBeforeProfile:
		return "GPU work queued before profiling"
	case LineHostSync:
		return "host blocked in sync or copy"
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
	srcPeerWait
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

var sourceLine = [nSources]string{LineCompile, LineGPUCompute, LinePeerWait, LineCommunication, LineCopies, LineOtherSteps, LineBeforeProfile,
	LineHostSync, LineCompile, LineDataLoading, LineProfiler, LineLaunch, LineFramework}

// transferOps are the framework ops that move a tensor between host and
// device through a memcpy (and wait for it when the copy is synchronous).
var transferOps = setOf("aten::copy_", "aten::_to_copy", "aten::to", "aten::item", "aten::_local_scalar_dense", "aten::cpu", "aten::_copy_from",
	"aten::_copy_from_and_resize")

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

// stepWindows are the steps' windows, which the ledger index files host
// work under.
func stepWindows(works []stepWork) []trace.Span {
	windows := make([]trace.Span, len(works))
	for i := range works {
		windows[i] = works[i].window
	}
	return windows
}

// ledgers fills each step's Ledger and StepStats.SteadyLedger from the
// ledger index li of the steps' windows, and keeps each line's intervals
// for LedgerSegments; and each step's GPU counts (countGPU).
func (ix *index) ledgers(r *Result, works []stepWork, li *ledgerIndex) {
	t := ix.t
	r.ledgerSegs = make([]stepSegs, len(t.Steps))
	// Each step's ledger reads only its own window's intervals; a chunk
	// of steps reuses one scratch from step to step.
	inChunks(len(t.Steps), func(lo, hi int) {
		var sc ledgerScratch
		var arena segArena
		// The chunk's ledgers share one array, not an allocation each.
		entries := make([]LedgerEntry, (hi-lo)*nLedgerLines)
		for i := lo; i < hi; i++ {
			at := (i - lo) * nLedgerLines
			r.Steps[i].Ledger = ix.stepLedger(li, works[i].own, i, &sc, &r.Steps[i], entries[at:at:at+nLedgerLines])
			r.ledgerSegs[i] = encodeSegs(&sc.segs, &sc.enc, &arena)
			// The step's long host intervals are spent: dropped as
			// the steps go, not all held to the end.
			if li.long != nil {
				li.long[i] = nil
			}
		}
	})
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
	return r.ledgerSegs[i].line(line)
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

// launchLines are the ledger lines launch overhead lives in: the host
// launching (and the framework work around each launch), not copies,
// syncs, data loading or compilation.
var launchLines = []string{LineLaunch, LineFramework, LineIdle}

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

// appendIntersect appends the parts of sorted disjoint bounds a that
// sorted disjoint bounds b cover to dst.
func appendIntersect(dst, a, b []interval.Bounds) []interval.Bounds {
	for i, j := 0, 0; i < len(a) && j < len(b); {
		if lo, hi := max(a[i].Start, b[j].Start), min(a[i].End, b[j].End); hi > lo {
			dst = append(dst, interval.Bounds{Start: lo, End: hi})
		}
		if a[i].End < b[j].End {
			i++
		} else {
			j++
		}
	}
	return dst
}

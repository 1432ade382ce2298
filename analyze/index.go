package analyze

import (
	"cmp"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/trace"
)

// index is an analyzer's view of the facts it requires (see facts.go):
// each embedded fact is nil unless the analyzer lists it in Requires, so
// reading one it does not require fails its run instead of quietly
// depending on it. The metrics see every fact.
type index struct {
	t *trace.Trace
	// peerWait is Config.PeerWait (only the metrics' index has it).
	peerWait []trace.Span
	*StepFacts
	*CategoryFacts
	*AttributionFacts
	*LaunchFacts
	*BusyFacts
	*ShapeFacts
	*CompileFacts
	*PhaseFacts
	*CriticalFacts
	// owned is the Ownership fact (a named field: its Of and Activities
	// would collide with other facts' methods).
	owned *OwnershipFacts
	// host is the HostTable fact (a named field: its columns are read
	// by the few passes over every op or frame).
	host *hostTable
	// clock times the metrics' parts (Config.Stages; metrics only).
	clock *stageClock
}

// newIndex returns the view of the facts in results.
func newIndex(t *trace.Trace, results map[*Analyzer]any) *index {
	ix := &index{t: t}
	ix.StepFacts, _ = results[Steps].(*StepFacts)
	ix.CategoryFacts, _ = results[KernelCategories].(*CategoryFacts)
	ix.AttributionFacts, _ = results[Attribution].(*AttributionFacts)
	ix.LaunchFacts, _ = results[Launches].(*LaunchFacts)
	ix.BusyFacts, _ = results[IdleGaps].(*BusyFacts)
	ix.ShapeFacts, _ = results[Shapes].(*ShapeFacts)
	ix.CompileFacts, _ = results[CompileRegions].(*CompileFacts)
	ix.PhaseFacts, _ = results[Phases].(*PhaseFacts)
	ix.CriticalFacts, _ = results[Critical].(*CriticalFacts)
	ix.owned, _ = results[Ownership].(*OwnershipFacts)
	ix.host, _ = results[HostTable].(*hostTable)
	return ix
}

// busyIn returns the GPU busy time of all devices inside [from, to).
func (b *BusyFacts) busyIn(from, to trace.Time) trace.Duration {
	var total trace.Duration
	for _, dev := range b.devices {
		spans := b.busy[dev]
		i, _ := slices.BinarySearchFunc(spans, from, func(s interval.Bounds, at trace.Time) int { return cmp.Compare(s.End, at) })
		for ; i < len(spans) && spans[i].Start < to; i++ {
			s, e := max(spans[i].Start, from), min(spans[i].End, to)
			if e > s {
				total += trace.Duration(e - s)
			}
		}
	}
	return total
}

// idleGaps returns the intervals inside [from, to) where device dev runs
// nothing, the leading and trailing ones included.
func (b *BusyFacts) idleGaps(dev int32, from, to trace.Time) []trace.Span {
	return b.appendIdleGaps(nil, dev, from, to)
}

// appendIdleGaps appends idleGaps to dst: a caller asking step by step
// reuses one slice (fresh per step, the gaps of 1 M kernels were 90 MB
// of garbage, issue 27).
func (b *BusyFacts) appendIdleGaps(dst []trace.Span, dev int32, from, to trace.Time) []trace.Span {
	spans := b.busy[dev]
	i, _ := slices.BinarySearchFunc(spans, from, func(s interval.Bounds, at trace.Time) int { return cmp.Compare(s.End, at) })
	cur := from
	for ; i < len(spans) && spans[i].Start < to; i++ {
		if spans[i].Start > cur {
			dst = append(dst, trace.Span{Start: cur, End: spans[i].Start})
		}
		cur = max(cur, spans[i].End)
	}
	if cur < to {
		dst = append(dst, trace.Span{Start: cur, End: to})
	}
	return dst
}

// libraryFile reports whether a Python source file belongs to a library
// rather than the user's code, so evidence names the user's line.
func libraryFile(file string) bool {
	// The tests are one "or": the cheap prefix tests first, so a frame of
	// a package named from its root (PyTorch's stack reads torch/...)
	// answers before any search of the path.
	dirs := []string{"/torch/", "/triton/", "/jax/", "/jaxlib/", "/numpy/", "/functorch/"}
	if strings.HasPrefix(file, "<") {
		return true
	}
	for _, dir := range dirs {
		if strings.HasPrefix(file, dir[1:]) {
			return true
		}
	}
	for _, s := range []string{"site-packages/", "dist-packages/", "/lib/python3", "contextlib.py", "threading.py"} {
		if strings.Contains(file, s) {
			return true
		}
	}
	// Each package's directory below another; written with its slash,
	// not joined to one per call (a frame's walk asks).
	for _, dir := range dirs {
		if strings.Contains(file, dir) {
			return true
		}
	}
	return false
}

// userFrameOf returns the user frame at or above f (see UserFrames).
func (ix *AttributionFacts) userFrameOf(f trace.Index) trace.Index {
	return ix.users.Of(f)
}

// userLine returns the user-code source line ("model.py(42): forward")
// around GPU activity g's launch, or "".
func (ix *AttributionFacts) userLine(g int) string {
	f := ix.userFrameOf(ix.frameOf(g))
	if f == trace.None {
		return ""
	}
	return ix.t.Frames[f].Name
}

// IsSyncCall reports whether an API call (by name) blocks the host until
// the GPU catches up: the synchronize calls and synchronous copies.
func IsSyncCall(name string) bool {
	switch name {
	case "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
		"cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize",
		"cudaMemcpy", "cudaMemcpy2D", "cuMemcpyDtoH", "cuMemcpyDtoH_v2", "cuMemcpyHtoD", "cuMemcpyHtoD_v2", "cuMemcpy":
		return true
	}
	return false
}

// isLaunchCall reports whether API call c put work on a GPU stream.
func isLaunchCall(c *trace.APICall) bool {
	if c.FirstGPU != trace.None {
		return true
	}
	// Every name below holds "Launch": most calls that launched nothing
	// (syncs, event records, copies) are ruled out by one search, not
	// three.
	n := c.Name
	if !strings.Contains(n, "Launch") {
		return false
	}
	return strings.Contains(n, "LaunchKernel") || strings.Contains(n, "GraphLaunch") || strings.Contains(n, "LaunchCooperative")
}

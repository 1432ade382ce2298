package analyze

import (
	"cmp"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// index holds what several metrics and analyzers derive from the trace,
// computed once per Run in O(n log n).
type index struct {
	t *trace.Trace
	// cat, op and frame are per GPU activity: its category, the cpu op
	// that launched it and the innermost Python frame around the launch.
	cat   []string
	op    []trace.Index
	frame []trace.Index
	// busy holds, per device, the merged intervals where any kernel,
	// memcpy or memset ran.
	busy map[int32][]trace.Span
	// devices lists the device ids with GPU activity, ascending.
	devices []int32
	// userFrame memoises userFrameOf (-2 = not computed yet).
	userFrame []trace.Index
	// kernelRow maps a kernel name to its row in Result.Kernels.
	kernelRow map[string]int
	// step of each GPU activity (by launch time, else start) and of each
	// API call (by start), -1 when outside every step.
	gpuStep []int32
	apiStep []int32
	// nameOf is each GPU activity's kernel name id, names what the name
	// alone says (string work done once per distinct name).
	nameOf []int32
	names  []nameInfo
	// phase of each GPU activity (forward, backward, optimizer).
	phase []phase
	// autotune marks GPU activity torch.compile's compiler or autotuner
	// launched (nil when there is none).
	autotune []bool
	// comm splits busy time into communication and compute (nil without
	// communication kernels).
	comm *commBusy
}

// nameInfo is what a kernel's name alone tells.
type nameInfo struct {
	cat                              string
	library, gemmLike, compilerFused bool
}

// info returns what GPU activity g's name tells.
func (ix *index) info(g int) *nameInfo { return &ix.names[ix.nameOf[g]] }

func newIndex(t *trace.Trace) *index {
	ix := &index{t: t, busy: map[int32][]trace.Span{}}
	n := len(t.GPU)
	ix.cat = make([]string, n)
	ix.op = make([]trace.Index, n)
	ix.frame = make([]trace.Index, n)
	ix.gpuStep = make([]int32, n)
	byName := map[string]int32{}
	ix.nameOf = make([]int32, n)
	for i := range t.GPU {
		g := &t.GPU[i]
		id, ok := byName[g.Name]
		if !ok {
			id = int32(len(ix.names))
			byName[g.Name] = id
			ix.names = append(ix.names, nameInfo{cat: Category(g.Name), library: LibraryKernel(g.Name),
				gemmLike: gemmLikeName(g.Name), compilerFused: compilerFused(g.Name)})
		}
		ix.nameOf[i] = id
		ix.cat[i] = categoryOf(t, i, ix.names[id].cat)
		ix.op[i] = t.LaunchOp(trace.Index(i))
		ix.frame[i] = t.LaunchFrame(trace.Index(i))
		at := g.Start
		if g.Launch != trace.None {
			at = t.APICalls[g.Launch].Start
		}
		ix.gpuStep[i] = int32(t.StepOf(at))
	}
	ix.apiStep = make([]int32, len(t.APICalls))
	for i := range t.APICalls {
		ix.apiStep[i] = int32(t.StepOf(t.APICalls[i].Start))
	}
	ix.userFrame = make([]trace.Index, len(t.Frames))
	for i := range ix.userFrame {
		ix.userFrame[i] = -2
	}
	ix.phase = phases(t, ix.op)
	ix.autotune = AutotuneLaunches(t)
	ix.buildBusy()
	return ix
}

// buildBusy merges GPU intervals per device. GPU is sorted by (device,
// stream, start), so each device's activities are one contiguous run.
func (ix *index) buildBusy() {
	t := ix.t
	for lo := 0; lo < len(t.GPU); {
		dev := t.GPU[lo].Device
		hi := lo
		for hi < len(t.GPU) && t.GPU[hi].Device == dev {
			hi++
		}
		spans := make([]trace.Span, 0, hi-lo)
		for i := lo; i < hi; i++ {
			spans = append(spans, trace.Span{Start: t.GPU[i].Start, End: t.GPU[i].End})
		}
		ix.busy[dev] = append(ix.busy[dev], spans...)
		ix.devices = append(ix.devices, dev)
		lo = hi
	}
	slices.Sort(ix.devices)
	ix.devices = slices.Compact(ix.devices)
	for dev, spans := range ix.busy {
		slices.SortFunc(spans, func(a, b trace.Span) int { return cmp.Compare(a.Start, b.Start) })
		merged := spans[:0]
		for _, s := range spans {
			if n := len(merged); n > 0 && s.Start <= merged[n-1].End {
				merged[n-1].End = max(merged[n-1].End, s.End)
				continue
			}
			merged = append(merged, s)
		}
		ix.busy[dev] = merged
	}
}

// busyIn returns the GPU busy time of all devices inside [from, to).
func (ix *index) busyIn(from, to trace.Time) trace.Duration {
	var total trace.Duration
	for _, dev := range ix.devices {
		spans := ix.busy[dev]
		i, _ := slices.BinarySearchFunc(spans, from, func(s trace.Span, at trace.Time) int { return cmp.Compare(s.End, at) })
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
func (ix *index) idleGaps(dev int32, from, to trace.Time) []trace.Span {
	spans := ix.busy[dev]
	i, _ := slices.BinarySearchFunc(spans, from, func(s trace.Span, at trace.Time) int { return cmp.Compare(s.End, at) })
	var gaps []trace.Span
	cur := from
	for ; i < len(spans) && spans[i].Start < to; i++ {
		if spans[i].Start > cur {
			gaps = append(gaps, trace.Span{Start: cur, End: spans[i].Start})
		}
		cur = max(cur, spans[i].End)
	}
	if cur < to {
		gaps = append(gaps, trace.Span{Start: cur, End: to})
	}
	return gaps
}

// libraryFile reports whether a Python source file belongs to a library
// rather than the user's code, so evidence names the user's line.
func libraryFile(file string) bool {
	if strings.HasPrefix(file, "<") {
		return true
	}
	for _, s := range []string{"site-packages/", "dist-packages/", "/lib/python3", "contextlib.py", "threading.py"} {
		if strings.Contains(file, s) {
			return true
		}
	}
	for _, pkg := range []string{"torch/", "triton/", "jax/", "jaxlib/", "numpy/", "functorch/"} {
		if strings.HasPrefix(file, pkg) || strings.Contains(file, "/"+pkg) {
			return true
		}
	}
	return false
}

// userFrameOf returns the innermost frame at or above f that lies in the
// user's code, else the innermost frame with a source location, else None.
func (ix *index) userFrameOf(f trace.Index) trace.Index {
	if f == trace.None {
		return trace.None
	}
	if v := ix.userFrame[f]; v != -2 {
		return v
	}
	t := ix.t
	res := trace.None
	fallback := trace.None
	var seen []trace.Index
	for cur := f; cur != trace.None && len(seen) < 1<<12; cur = t.Frames[cur].Parent {
		if v := ix.userFrame[cur]; v != -2 {
			// An ancestor already resolved: its user frame is ours too;
			// if it found none, our own fallback is the innermost one.
			if v != trace.None && (fallback == trace.None || ix.isUserFrame(v)) {
				res = v
			}
			break
		}
		seen = append(seen, cur)
		file, _, _, ok := t.Frames[cur].Source()
		if !ok {
			continue
		}
		if fallback == trace.None {
			fallback = cur
		}
		if !libraryFile(file) {
			res = cur
			break
		}
	}
	if res == trace.None {
		res = fallback
	}
	for _, s := range seen {
		ix.userFrame[s] = res
	}
	return res
}

func (ix *index) isUserFrame(f trace.Index) bool {
	file, _, _, ok := ix.t.Frames[f].Source()
	return ok && !libraryFile(file)
}

// userLine returns the user-code source line ("model.py(42): forward")
// around GPU activity g's launch, or "".
func (ix *index) userLine(g int) string {
	f := ix.userFrameOf(ix.frame[g])
	if f == trace.None {
		return ""
	}
	return ix.t.Frames[f].Name
}

// isSyncCall reports whether an API call blocks the host until the GPU
// catches up.
func isSyncCall(name string) bool {
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
	n := c.Name
	return strings.Contains(n, "LaunchKernel") || strings.Contains(n, "GraphLaunch") || strings.Contains(n, "LaunchCooperative")
}

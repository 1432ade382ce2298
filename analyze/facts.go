package analyze

import (
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/parallel"
	"github.com/tracelens/tracelens/trace"
)

// Facts are analyzers that report no finding: they compute, once per Run,
// what several analyzers and the metrics need, and return it as their
// result. An analyzer lists the facts it reads in Requires and reads them
// through its Pass (FactOf, or the typed accessor declared beside the
// fact); a fact it does not require is not there.
//
// The facts in this file are those the metrics read (Facts), and the
// index embeds them for the metrics' and older analyzers' code. A new
// fact is one file: its Analyzer, its result type and an accessor that
// calls FactOf (see CompiledComparisons); it runs, after the metrics,
// when an analyzer that runs requires it.

// Steps assigns GPU activities and API calls to steps: an activity to the
// step its launch call started in (its own start when it has no launch
// call and its device records none; a kernel without one on a device
// that records them belongs to no step), an API call to the step it started in. This is the one definition
// of "in a step" (and so of "per step") that every metric, finding and
// face uses.
var Steps = &Analyzer{
	Name:     "steps",
	Doc:      "Assigns each GPU activity to the step its launch call started in (its own start without one) and each API call to the step it started in.",
	Requires: []*Analyzer{HostTable},
	Fact: func(p *Pass) (any, error) {
		t := p.Trace
		host, err := hostTableOf(p)
		if err != nil {
			return nil, err
		}
		s := &StepFacts{gpuStep: make([]int32, len(t.GPU)), apiStep: make([]int32, len(t.APICalls))}
		// On a device whose kernels carry their launch calls, a kernel
		// without one was launched before profiling started (the tail of
		// a replay, a warm-up): no step launched it. Devices without
		// launch records (JAX, kernel-only traces) place kernels by start.
		// A device's kernels come in runs: the map is written when the
		// device changes, not for every kernel.
		launched := map[int32]bool{}
		last := int32(-1)
		for i := range t.GPU {
			if g := &t.GPU[i]; g.Kind == trace.Kernel && g.Launch != trace.None && (g.Device != last || len(launched) == 0) {
				launched[g.Device], last = true, g.Device
			}
		}
		// The trace's span and the two placements are independent, and
		// each activity's or call's step is its own: in chunks, side by
		// side.
		parallel.Each(3, func(part int) {
			switch part {
			case 0:
				s.whole = wholeSpan(t, host)
			case 1:
				inChunks(len(t.GPU), func(lo, hi int) { gpuSteps(t, host.calls.start, launched, s.gpuStep, lo, hi) })
			default:
				// The calls' starts from the HostTable's column (8 bytes
				// a call, not the 72-byte calls).
				inChunks(len(t.APICalls), func(lo, hi int) {
					steps := newStepCursor(t)
					for i, at := range host.calls.start[lo:hi] {
						s.apiStep[lo+i] = int32(steps.of(at))
					}
				})
			}
		})
		return s, nil
	},
}

// gpuSteps places GPU activities lo to hi in their steps (see Steps),
// a launch call's start read from the calls' start column (callStart).
func gpuSteps(t *trace.Trace, callStart []trace.Time, launched map[int32]bool, out []int32, lo, hi int) {
	steps := newStepCursor(t)
	for i := lo; i < hi; i++ {
		g := &t.GPU[i]
		at := g.Start
		if g.Launch != trace.None {
			at = callStart[g.Launch]
		} else if g.Kind == trace.Kernel && launched[g.Device] {
			out[i] = -1
			continue
		}
		out[i] = int32(steps.of(at))
	}
}

// wholeSpan is t.Span(), the earliest start and latest end of every
// event, its families read in chunks side by side: the minimum and
// maximum do not depend on the order they are taken in. (One generic
// walk for the five families costs 1.4 ms more on one core over 1.2 M
// events than five hand-written loops did; the step fact is not the
// facts' longest chain.)
func wholeSpan(t *trace.Trace, host *hostTable) trace.Span {
	parts := familyBounds(nil, t.GPU, func(a *trace.GPUActivity) *trace.Span { return &a.Span })
	parts = append(parts, columnBounds(host.calls.start, host.calls.end)...)
	// The ops' and frames' bounds came with their columns (HostTable).
	parts = append(parts, host.ops.bounds, host.frames.bounds)
	parts = familyBounds(parts, t.Annotations, func(a *trace.Annotation) *trace.Span { return &a.Span })
	var s trace.Span
	first := true
	for _, b := range parts {
		if !b.any {
			continue // an empty family
		}
		if first || b.start < s.Start {
			s.Start = b.start
		}
		if first || b.end > s.End {
			s.End = b.end
		}
		first = false
	}
	return s
}

// familyBounds appends to parts the bounds of one event family's spans,
// chunk by chunk side by side (span: where an event's span is).
func familyBounds[E any](parts []spanBounds, events []E, span func(*E) *trace.Span) []spanBounds {
	return append(parts, mapChunks(len(events), func(lo, hi int) spanBounds {
		b := newBounds()
		for i := lo; i < hi; i++ {
			b.widen(span(&events[i]))
		}
		return b
	})...)
}

// columnBounds returns the bounds of spans held in start and end
// columns (the HostTable's calls': 16 bytes a call, not 72), chunk by
// chunk side by side.
func columnBounds(start, end []trace.Time) []spanBounds {
	return mapChunks(len(start), func(lo, hi int) spanBounds {
		b := newBounds()
		if lo == hi {
			return b
		}
		b.any = true
		for _, s := range start[lo:hi] {
			b.start = min(b.start, s)
		}
		for _, e := range end[lo:hi] {
			b.end = max(b.end, e)
		}
		return b
	})
}

// spanBounds are the earliest start and latest end of the spans seen so
// far (any: there was one).
type spanBounds struct {
	start, end trace.Time
	any        bool
}

// newBounds returns the bounds of no span.
func newBounds() spanBounds { return spanBounds{start: math.MaxInt64, end: math.MinInt64} }

// widen takes s into b.
func (b *spanBounds) widen(s *trace.Span) {
	b.start, b.end, b.any = min(b.start, s.Start), max(b.end, s.End), true
}

// StepFacts is the result of Steps.
type StepFacts struct {
	// gpuStep and apiStep are the step index of each GPU activity and API
	// call, -1 outside every step.
	gpuStep []int32
	apiStep []int32
	// whole is the trace's span (Trace.Span walks every event: once).
	whole trace.Span
}

// OfGPU returns the index in Trace.Steps of GPU activity g's step, or -1.
func (s *StepFacts) OfGPU(g int) int { return int(s.gpuStep[g]) }

// OfAPI returns the index in Trace.Steps of API call i's step, or -1.
func (s *StepFacts) OfAPI(i int) int { return int(s.apiStep[i]) }

// KernelCategories puts every GPU activity in exactly one category (one of
// Categories()): memcpys and memsets by kind, kernels by name, refined by
// how they were launched (Triton only on the trace's evidence: see
// tritonEvidence) and, for names that say nothing, by the launching op.
var KernelCategories = &Analyzer{
	Name: "kernel-categories",
	Doc: "Puts every GPU activity in exactly one kernel category: memcpy and memset by kind, kernels by name (what the name alone says is computed once per distinct name), custom-named kernels by their launching op. " +
		"Triton by evidence only: an Inductor name (triton_poi_/triton_red_/triton_per_/triton_tem_/triton_mm…, any name starting triton), or, for a bare-named kernel launched through the driver API (cuLaunchKernel*, hipModuleLaunchKernel), " +
		"Triton's launcher in the Python stack around the launch (triton/runtime/, triton/backends/, triton/compiler/, PyTorch's *triton* glue such as Inductor's triton_heuristics.py, a module Inductor generated under /tmp/torchinductor_*) before any frame of the user's own code, " +
		"else, when the stack says nothing, an op around the launch named for Triton or of torch.compile (Torch-Compiled Region, CompiledFunction, Inductor's autotuner), else a record_function range around it whose name says triton. " +
		"Without such evidence a bare-named kernel is custom (or what its name says: a naive_gemm is gemm-like) whatever API launched it: CuPy RawKernel, Numba, PyCUDA, C++ extensions and raw driver code launch through cuLaunchKernel too.",
	Fact: func(p *Pass) (any, error) {
		t := p.Trace
		c := &CategoryFacts{cat: make([]uint8, len(t.GPU)), nameOf: nameIDs{small: make([]uint16, len(t.GPU))}}
		// Kernel names are long (templates, functors): found by address
		// (nameCache), not hashed per activity.
		var byName nameCache[int32]
		newName := func(name string) int32 {
			c.names = append(c.names, nameInfo{cat: Category(name), library: LibraryKernel(name),
				gemmLike: gemmLikeName(name), compilerFused: compilerFused(name), foreach: strings.Contains(name, "multi_tensor_apply")})
			return int32(len(c.names) - 1)
		}
		catID := map[string]uint8{}
		ev := newTritonEvidence(t)
		for i := range t.GPU {
			g := &t.GPU[i]
			id := byName.get(g.Name, newName)
			c.nameOf.set(i, id)
			cat := categoryOf(t, i, c.names[id].cat, &ev)
			k, ok := catID[cat]
			if !ok {
				k = uint8(len(c.catNames))
				catID[cat] = k
				c.catNames = append(c.catNames, cat)
			}
			c.cat[i] = k
		}
		return c, nil
	},
}

// CategoryFacts is the result of KernelCategories.
type CategoryFacts struct {
	// cat is each GPU activity's category, as an index into catNames (a
	// byte, not a 16-byte string per activity: issue 27; categoryOf
	// returns one of the few Categories); nameOf its kernel name's id and
	// names what each distinct name alone says.
	cat      []uint8
	catNames []string
	nameOf   nameIDs
	names    []nameInfo
}

// nameIDs holds each GPU activity's kernel name id: in 2 bytes while the
// trace has at most 65,536 distinct names (all but a pathological one),
// else in 4 (issue 27: the facts are kept compact).
type nameIDs struct {
	small []uint16
	large []int32
}

// set records activity g's name id.
func (n *nameIDs) set(g int, id int32) {
	if n.large == nil && id <= math.MaxUint16 {
		n.small[g] = uint16(id)
		return
	}
	if n.large == nil {
		n.large = make([]int32, len(n.small))
		for i, v := range n.small {
			n.large[i] = int32(v)
		}
		n.small = nil
	}
	n.large[g] = id
}

// at returns activity g's name id.
func (n *nameIDs) at(g int) int32 {
	if n.large != nil {
		return n.large[g]
	}
	return int32(n.small[g])
}

// Of returns GPU activity g's category.
func (c *CategoryFacts) Of(g int) string { return c.category(g) }

// category returns GPU activity g's category.
func (c *CategoryFacts) category(g int) string { return c.catNames[c.cat[g]] }

// nameInfo is what a kernel's name alone tells: foreach marks a
// multi_tensor_apply kernel (one launch over many tensors).
type nameInfo struct {
	cat                                       string
	library, gemmLike, compilerFused, foreach bool
}

// info returns what GPU activity g's name tells.
func (c *CategoryFacts) info(g int) *nameInfo { return &c.names[c.nameOf.at(g)] }

// Attribution links each GPU activity to the framework op that launched it
// and the Python frame around the launch, and resolves the user's source
// line (skipping library frames).
var Attribution = &Analyzer{
	Name: "attribution",
	Doc:  "Links each GPU activity to the innermost framework op around its launch and the innermost Python frame, and finds the user's source line above it (library frames skipped).",
	Fact: func(p *Pass) (any, error) {
		return &AttributionFacts{t: p.Trace, users: NewUserFrames(p.Trace)}, nil
	},
}

// AttributionFacts is the result of Attribution.
type AttributionFacts struct {
	// t is the model, which links each GPU activity to its launch call
	// and the call to its op and frame: read there (opOf, frameOf), not
	// copied into two indexes per activity (8 bytes an activity for as
	// long as the facts live, issue 27).
	t *trace.Trace
	// users finds the user's frame above a launch's frame.
	users *UserFrames
}

// Op returns the framework op that launched GPU activity g, or trace.None.
func (a *AttributionFacts) Op(g int) trace.Index { return a.opOf(g) }

// opOf returns the framework op that launched GPU activity g, or
// trace.None.
func (a *AttributionFacts) opOf(g int) trace.Index {
	if l := a.t.GPU[g].Launch; l != trace.None {
		return a.t.APICalls[l].Op
	}
	return trace.None
}

// frameOf returns the innermost Python frame around GPU activity g's
// launch, or trace.None.
func (a *AttributionFacts) frameOf(g int) trace.Index {
	if l := a.t.GPU[g].Launch; l != trace.None {
		return a.t.APICalls[l].Frame
	}
	return trace.None
}

// UserLine returns the user's source line ("model.py(42): forward") around
// GPU activity g's launch, or "".
func (a *AttributionFacts) UserLine(g int) string { return a.userLine(g) }

// Launches classifies API calls: which put work on a GPU stream, which
// block the host until the GPU catches up, and the blocking time inside
// each framework op.
var Launches = &Analyzer{
	Name: "launches",
	Doc:  "Classifies API calls as launches (they put work on a stream) and blocking synchronisations (stream/device/event syncs, synchronous memcpys).",
	Fact: func(p *Pass) (any, error) {
		t := p.Trace
		l := &LaunchFacts{launch: make([]bool, len(t.APICalls)), sync: make([]bool, len(t.APICalls))}
		for i := range t.APICalls {
			c := &t.APICalls[i]
			l.launch[i] = isLaunchCall(c)
			l.sync[i] = IsSyncCall(c.Name)
		}
		return l, nil
	},
}

// LaunchFacts is the result of Launches.
type LaunchFacts struct {
	launch, sync []bool
}

// IsLaunch reports whether API call i put work on a GPU stream.
func (l *LaunchFacts) IsLaunch(i int) bool { return l.launch[i] }

// IsSync reports whether API call i blocks the host until the GPU catches up.
func (l *LaunchFacts) IsSync(i int) bool { return l.sync[i] }

// IdleGaps merges, per device, the intervals where any kernel, memcpy or
// memset runs: GPU busy time is their union (the one definition of "GPU
// busy"), and the gaps between them are GPU idle.
var IdleGaps = &Analyzer{
	Name: "idle-gaps",
	Doc:  "Merges per device the intervals where any kernel, memcpy or memset runs: their union is GPU busy time, the gaps between them GPU idle time.",
	Fact: func(p *Pass) (any, error) {
		return newBusy(p.Trace), nil
	},
}

// BusyFacts is the result of IdleGaps.
type BusyFacts struct {
	// busy holds, per device, the merged intervals where any kernel,
	// memcpy or memset ran; devices lists the device ids with GPU
	// activity, ascending.
	busy    map[int32][]interval.Bounds
	devices []int32
}

// Devices returns the ids of the devices with GPU activity, ascending.
func (b *BusyFacts) Devices() []int32 { return slices.Clone(b.devices) }

// BusyIn returns the GPU busy time of all devices inside [from, to).
func (b *BusyFacts) BusyIn(from, to trace.Time) trace.Duration { return b.busyIn(from, to) }

// IdleGaps returns the intervals inside [from, to) where device dev runs
// nothing, the leading and trailing ones included.
func (b *BusyFacts) IdleGaps(dev int32, from, to trace.Time) []trace.Span {
	return b.idleGaps(dev, from, to)
}

// newBusy merges GPU intervals per device, from the activities where
// they lie (mergeRuns).
func newBusy(t *trace.Trace) *BusyFacts {
	b := &BusyFacts{busy: map[int32][]interval.Bounds{}}
	for dev, runs := range deviceRuns(t.GPU) {
		n := 0
		for _, r := range runs {
			n += r.hi - r.lo
		}
		b.busy[dev] = unionRuns(t.GPU, runs, nil, n)
		b.devices = append(b.devices, dev)
	}
	slices.Sort(b.devices)
	return b
}

// Shapes parses the input shapes and dtypes of GEMM-like framework ops
// (aten::mm, addmm, bmm, matmul, linear) into FLOPs and bytes per call,
// once per distinct (op, dims, types).
var Shapes = &Analyzer{
	Name: "shapes",
	Doc:  "Parses the input shapes and dtypes of GEMM-like framework ops into their FLOPs and bytes per call, once per distinct op, dims and types.",
	Fact: func(p *Pass) (any, error) {
		return &ShapeFacts{seen: map[[3]string]GEMMShape{}}, nil
	},
}

// ShapeFacts is the result of Shapes: a memo, filled as ops are asked for
// (most traces repeat a few shapes every layer and step).
type ShapeFacts struct {
	// mu guards seen: finding analyzers run side by side and parse
	// shapes as they meet them.
	mu   sync.Mutex
	seen map[[3]string]GEMMShape
}

// GEMMShape is what an op's inputs say about the GEMM it computes.
type GEMMShape struct {
	// DType is the first input's element type as the profiler names it
	// ("c10::BFloat16", "float"); Shape is "M×K · K×N" in words.
	DType        string
	Shape        string
	FLOPs, Bytes float64
}

// GEMM returns the GEMM shape of op o (zero FLOPs when its inputs do not
// say).
func (s *ShapeFacts) GEMM(o *trace.Op) GEMMShape {
	k := [3]string{o.Name, o.InputDims, o.InputTypes}
	s.mu.Lock()
	defer s.mu.Unlock()
	if g, ok := s.seen[k]; ok {
		return g
	}
	var g GEMMShape
	for _, ty := range parseTypes(o.InputTypes) {
		if elemSize(ty) > 0 {
			g.DType = ty
			break
		}
	}
	g.FLOPs, g.Bytes, g.Shape = gemmFLOPs(o.Name, o.InputDims, elemSize(g.DType))
	s.seen[k] = g
	return g
}

// Facts returns the fact analyzers the metrics read, each after those it
// requires, and ProfilerClock, which every Run's profiler-cost estimate
// reads: they run first, on every Run. Other facts run when a selected
// analyzer requires them.
func Facts() []*Analyzer {
	return []*Analyzer{HostTable, Steps, KernelCategories, Attribution, Launches, IdleGaps, Shapes, CompileRegions, Phases, Critical, Ownership, ProfilerClock}
}

// unionSpans returns the union of spans as sorted, disjoint spans (it
// sorts spans in place and reuses its storage): interval.Union, the one
// interval union of tracelens (GPU busy time, compile regions, ...).
func unionSpans(spans []trace.Span) []trace.Span { return interval.Union(spans) }

package analyze

// The evidence that a kernel with a bare name was launched by Triton:
// what category.go's classification asks when a name alone cannot say.

import (
	"cmp"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// isTritonLaunch reports whether GPU activity g is a Triton kernel with a
// name that does not say so (a user's @triton.jit "matmul_kernel"): a bare
// name (no C++ signature), not a library's, and a launch that shows Triton
// (tritonEvidence.launch). Being launched through the driver API is not
// enough: CuPy's RawKernel and RawModule, Numba, PyCUDA, C++ extensions and
// raw driver code launch their kernels that way too, and calling those
// kernels Triton hides them from custom-gemm, the roofline and fusion.
func isTritonLaunch(t *trace.Trace, g int, ev *tritonEvidence) bool {
	a := &t.GPU[g]
	if strings.ContainsAny(a.Name, "(<: ") || t.Meta.CUDAProgram() {
		// A CUDA C program (tracelens capture, a native nsys export) has no
		// Python, so no Triton.
		return false
	}
	return ev.launch(g) && !LibraryKernel(a.Name)
}

// Verdicts of a walk over a launch's Python stack.
const (
	stackUnseen int8 = iota // not computed yet
	stackTriton             // a Triton or Inductor launcher frame encloses the launch
	stackUser               // the user's own code launched it, no Triton frame in between
	stackSilent             // neither: only library or built-in frames
)

// tritonEvidence finds what a trace says about whether Triton launched a
// kernel. In order:
//
//  1. The Python stack around the launch (with_stack traces): walking out
//     from the launch's innermost frame, a frame of Triton's runtime,
//     backends or compiler (triton/runtime/jit.py: JITFunction.run,
//     triton/backends/nvidia/driver.py: the launcher, triton/compiler/:
//     CompiledKernel), of PyTorch's Triton glue (a torch/ file named
//     *triton*: Inductor's triton_heuristics.py and static_triton_launcher.py,
//     triton_kernel_wrap.py) or of a module Inductor generated
//     (/tmp/torchinductor_<user>/…py) makes it Triton; reaching the user's own
//     code first (a CuPy RawKernel call, a Numba or PyCUDA launch, a C++
//     extension's binding) makes it not Triton, whatever encloses that code
//     (triton.testing.do_bench timing a CuPy kernel is not Triton). A stack
//     of library and built-in frames only says nothing.
//  2. When the stack says nothing (or the trace has none), the ops around
//     the launch: one named for Triton (Inductor wraps each launch in a range
//     named for its kernel, "triton_poi_fused_add_0"), a torch.compile
//     region (Torch-Compiled Region, CompiledFunction: a user's Triton kernel
//     under torch.compile keeps its bare name) or Inductor's autotuner
//     (CachingAutotuner, benchmark_all_configs).
//  3. Then the record_function ranges around the launch on its thread: one
//     whose name says "triton" (a benchmark's "triton_fused_128_128_64").
//
// The launch call must be the driver API's (cuLaunchKernel*, or
// hipModuleLaunchKernel on ROCm): how Triton launches. Without any of the
// above a bare-named kernel is not Triton, whichever API launched it: a
// trace recorded without Python stacks, ranges or ops around a user's
// @triton.jit kernel calls it custom (or what its name says). That is the
// cheaper mistake: Triton GEMMs tile through shared memory, so custom-gemm
// stays silent on them, while calling a naive raw GEMM Triton hid it.
//
// The zero value answers one launch at a time without remembering; one from
// newTritonEvidence remembers each frame's and op's verdict and indexes the
// Triton-named ranges per thread, so answering for every launch is O(n).
type tritonEvidence struct {
	t *trace.Trace
	// remember is set by newTritonEvidence: frames and ops then memoise
	// each frame's stack verdict and each op's (stackTriton or
	// stackSilent).
	remember    bool
	frames, ops []int8
	// ranges are the merged spans of Triton-named ranges, sorted by
	// (thread, start); built on first use when remembering.
	ranges      []threadSpan
	rangesBuilt bool
}

// threadSpan is a span on one host thread.
type threadSpan struct {
	th trace.Index
	trace.Span
}

func newTritonEvidence(t *trace.Trace) tritonEvidence {
	return tritonEvidence{t: t, remember: true, frames: make([]int8, len(t.Frames)), ops: make([]int8, len(t.Ops))}
}

// launch reports whether GPU activity g was launched through the driver
// API and the trace shows Triton did it (see tritonEvidence).
func (e *tritonEvidence) launch(g int) bool {
	t := e.t
	a := &t.GPU[g]
	if a.Launch == trace.None {
		return false
	}
	call := &t.APICalls[a.Launch]
	if !(call.Driver && strings.HasPrefix(call.Name, "cuLaunchKernel") || strings.HasPrefix(call.Name, "hipModuleLaunchKernel") ||
		strings.HasPrefix(call.Name, "hipExtModuleLaunchKernel")) {
		return false
	}
	switch e.stack(call.Frame) {
	case stackTriton:
		return true
	case stackUser:
		return false
	}
	return e.op(call.Op) || e.inRange(call)
}

// stack returns the verdict of the Python stack from frame f outwards.
func (e *tritonEvidence) stack(f trace.Index) int8 {
	t := e.t
	return e.walk(f, func(i trace.Index) trace.Index { return t.Frames[i].Parent }, e.frames,
		func(i trace.Index) int8 { return frameVerdict(t.Frames[i].Name) })
}

// walk follows parent links from start to the first element with a
// verdict (remembered in memo when e.remember, for every element passed),
// stackSilent when none has one.
func (e *tritonEvidence) walk(start trace.Index, parent func(trace.Index) trace.Index, memo []int8, verdict func(trace.Index) int8) int8 {
	res := stackSilent
	var seen []trace.Index
	for cur, n := start, 0; cur != trace.None && n < 1<<12; cur, n = parent(cur), n+1 {
		if e.remember {
			if v := memo[cur]; v != stackUnseen {
				res = v
				break
			}
			seen = append(seen, cur)
		}
		if v := verdict(cur); v != stackSilent {
			res = v
			break
		}
	}
	for _, s := range seen {
		memo[s] = res
	}
	return res
}

// frameVerdict says what one Python frame ("triton/runtime/jit.py(720):
// run") says about a launch inside it: stackTriton for Triton's and
// Inductor's launch machinery, stackUser for the user's code, stackSilent
// for other libraries and frames without a source file.
func frameVerdict(name string) int8 {
	file, _, _, ok := trace.ParseFrameName(name)
	if !ok || strings.HasPrefix(file, "<") {
		return stackSilent
	}
	p := "/" + strings.ReplaceAll(file, "\\", "/")
	for _, dir := range []string{"/triton/runtime/", "/triton/backends/", "/triton/compiler/"} {
		if strings.Contains(p, dir) {
			return stackTriton
		}
	}
	base := p[strings.LastIndexByte(p, '/')+1:]
	if strings.Contains(p, "/torch/") && strings.Contains(base, "triton") || strings.Contains(p, "/torchinductor_") {
		return stackTriton
	}
	if !libraryFile(file) {
		return stackUser
	}
	return stackSilent
}

// op reports whether op i or one enclosing it says Triton or Inductor.
func (e *tritonEvidence) op(i trace.Index) bool {
	t := e.t
	return e.walk(i, func(i trace.Index) trace.Index { return t.Ops[i].Parent }, e.ops, func(i trace.Index) int8 {
		if tritonOp(t.Ops[i].Name) {
			return stackTriton
		}
		return stackSilent
	}) == stackTriton
}

// tritonOp reports whether an op's name says the kernels launched inside it
// are Triton's: named for Triton, a torch.compile region or Inductor's
// autotuner.
func tritonOp(n string) bool {
	return tritonRange(n) || strings.HasPrefix(n, "Torch-Compiled Region") || strings.Contains(n, "CompiledFunction") ||
		strings.Contains(n, "CachingAutotuner") || strings.Contains(n, "benchmark_all_configs")
}

// tritonRange reports whether a range's name says Triton.
func tritonRange(n string) bool {
	return strings.Contains(strings.ToLower(n), "triton")
}

// inRange reports whether API call c lies inside a host range whose name
// says Triton.
func (e *tritonEvidence) inRange(c *trace.APICall) bool {
	t := e.t
	if !e.remember {
		// Not remembering: one pass over the ranges.
		for i := range t.Annotations {
			a := &t.Annotations[i]
			if !a.GPU && a.Thread == c.Thread && a.Start <= c.Start && a.End >= c.End && tritonRange(a.Name) {
				return true
			}
		}
		return false
	}
	if !e.rangesBuilt {
		e.rangesBuilt = true
		// Annotations are sorted by (thread, start): merging overlaps
		// keeps the spans sorted and leaves one candidate per call.
		for i := range t.Annotations {
			a := &t.Annotations[i]
			if a.GPU || !tritonRange(a.Name) {
				continue
			}
			if n := len(e.ranges); n > 0 && e.ranges[n-1].th == a.Thread && a.Start <= e.ranges[n-1].End {
				e.ranges[n-1].End = max(e.ranges[n-1].End, a.End)
				continue
			}
			e.ranges = append(e.ranges, threadSpan{a.Thread, a.Span})
		}
	}
	// The last merged span starting at or before the call.
	i, _ := slices.BinarySearchFunc(e.ranges, threadTime{c.Thread, c.Start}, func(s threadSpan, k threadTime) int {
		if x := cmp.Compare(s.th, k.th); x != 0 {
			return x
		}
		if s.Start > k.at {
			return 1
		}
		return -1
	})
	return i > 0 && e.ranges[i-1].th == c.Thread && e.ranges[i-1].End >= c.End
}

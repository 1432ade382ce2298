package analyze

import (
	"cmp"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// Kernel categories, the vocabulary report, tui and diff group kernels by.
const (
	CategoryGEMM          = "gemm"
	CategoryGEMV          = "gemv"
	CategoryConv          = "conv"
	CategoryAttention     = "attention"
	CategoryElementwise   = "elementwise"
	CategoryReduction     = "reduction"
	CategoryRNG           = "rng"
	CategoryCopy          = "copy"
	CategoryMemset        = "memset"
	CategoryCommunication = "communication"
	CategoryTriton        = "triton"
	CategoryCustom        = "custom"
)

var categoryOrder = []string{
	CategoryGEMM, CategoryGEMV, CategoryConv, CategoryAttention, CategoryElementwise, CategoryReduction,
	CategoryRNG, CategoryCopy, CategoryMemset, CategoryCommunication, CategoryTriton, CategoryCustom,
}

// Categories returns every kernel category in display order.
func Categories() []string { return append([]string(nil), categoryOrder...) }

// Category classifies a kernel by its name alone. Names from cuBLAS,
// cuDNN, CUTLASS, NCCL, PyTorch's ATen, Inductor's Triton kernels and XLA
// fusions are recognised; anything else is CategoryCustom. CategoryOf
// refines this with what the trace knows about the launch (a Triton kernel
// written by the user has a bare name; the Python stack, ops or ranges
// around its launch show Triton launched it).
func Category(name string) string {
	// Classify by what names the kernel (its qualified function and the
	// functors among its template arguments), never by its parameter
	// types: FBGEMM's embedding kernels take an at::PhiloxCudaState and
	// are not RNG.
	n := strings.ToLower(kernelIdentity(name))
	// FBGEMM's namespace (fbgemm_gpu::) says nothing about the kernel:
	// most of its kernels are embedding lookups, not GEMMs.
	n = strings.ReplaceAll(n, "fbgemm", "fb")
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(n, s) {
				return true
			}
		}
		return false
	}
	switch {
	case strings.HasPrefix(n, "memcpy"):
		return CategoryCopy
	case strings.HasPrefix(n, "memset"):
		return CategoryMemset
	case has("nccl", "rccl", "all_reduce", "allreduce", "all_gather", "allgather", "reduce_scatter", "reducescatter", "all-reduce", "all-gather", "alltoall", "all_to_all", "sendrecv"):
		return CategoryCommunication
	case has("flash", "fmha", "attention", "attn", "sdpa", "mha_", "dot_do_o", "convert_dq", "dq_dk", "dkdv"):
		// The last four are cuDNN's SDPA backward helpers (rowsum(dO·O),
		// the dQ accumulator's conversion).
		return CategoryAttention
	case has("multi_tensor_apply", "foreach", "amp_update_scale", "non_finite_check"):
		// ATen's multi-tensor kernels (foreach optimizers, AMP's
		// unscale): elementwise math over many tensors at once.
		return CategoryElementwise
	case has("gammabetabackward", "layer_norm", "layernorm", "rms_norm", "rmsnorm", "group_norm", "batch_norm", "instance_norm"):
		// Normalisation kernels and their backward (GammaBetaBackward
		// sums the weight and bias gradients over the batch).
		return CategoryReduction
	case strings.HasPrefix(n, "triton_") || strings.HasPrefix(n, "triton"):
		return CategoryTriton
	case strings.Contains(kernelFunc(n), "gemv") || has("dot_kernel"):
		return CategoryGEMV
	case has("convolution", "convolve", "conv1d", "conv2d", "conv3d", "implicit_gemm", "winograd", "fprop", "dgrad", "wgrad", "cudnn"):
		return CategoryConv
	case has("gemm", "xmma", "nvjet", "cutlass", "cublas", "magma", "matmul", "dot_general", "_mma", "hmma", "imma", "wmma", "cijk_", "hipblaslt"):
		// Cijk_* are rocBLAS/hipBLASLt's Tensile GEMMs.
		return CategoryGEMM
	case has("philox", "curand", "normal_kernel", "uniform", "distribution", "randperm", "bernoulli", "random", "rng", "dropout"):
		return CategoryRNG
	case has("reduce", "softmax", "norm", "sum_kernel", "argmax", "argmin", "cub::", "scan", "topk", "sort", "cumsum", "mean_kernel", "welford", "reduction"):
		return CategoryReduction
	case has("copy", "gather", "index", "scatter", "cat_", "catarray", "transpose", "permute", "repeat", "embedding", "take", "masked_select", "nonzero"):
		return CategoryCopy
	case has("elementwise", "loop_", "_fusion"):
		return CategoryElementwise
	case strings.Contains(n, "at::native") && has("fill", "activation", "relu", "gelu", "silu", "sigmoid", "tanh", "add_kernel", "mul_kernel", "clamp"):
		// Activation words name ATen's kernels; in a user's kernel name
		// ("fused_linear_relu_kernel") they do not make it elementwise.
		return CategoryElementwise
	case strings.Contains(n, "at::native::"):
		// Any other ATen kernel is PyTorch's own, not the user's: its
		// kernels are elementwise or data movement unless named above.
		return CategoryElementwise
	}
	return CategoryCustom
}

// kernelIdentity returns what names a kernel: for a C++ signature its
// namespace-qualified function name and ShortKernelName (the function
// plus the functors among its template arguments); other names (cuBLAS
// sm90_xmma_*, Triton, XLA, NCCL without parameters) whole.
func kernelIdentity(name string) string {
	short := ShortKernelName(name)
	if short == name {
		return name
	}
	sig := name
	depth := 0
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case '<':
			depth++
		case '>':
			depth = max(depth-1, 0)
		case '(':
			if depth == 0 && !strings.HasPrefix(name[i:], "(anonymous namespace)") {
				sig = name[:i]
				i = len(name)
			}
		}
	}
	if lt := strings.IndexByte(sig, '<'); lt >= 0 {
		sig = sig[:lt]
	}
	if sp := strings.LastIndexByte(sig, ' '); sp >= 0 && !strings.HasSuffix(sig[:sp+1], "(anonymous ") {
		sig = sig[sp+1:] // drop the return type ("void")
	}
	return sig + " " + short
}

// kernelFunc returns the kernel's function name without return type,
// template arguments or parameters, so words inside template arguments
// (gemmk1_kernel<..., cublasGemvTensorStridedBatched<float>>) do not
// decide its category.
func kernelFunc(name string) string {
	short := ShortKernelName(name)
	if i := strings.IndexByte(short, '<'); i >= 0 {
		short = short[:i]
	}
	return short
}

// CategoryOf classifies GPU activity g of t: memcpy and memset activities
// by kind, kernels by name, refined by how they were launched (a bare-named
// kernel is CategoryTriton only when the trace shows Triton launched it;
// see TritonEvidence) and, for names that say nothing, by the launching
// op. It classifies one activity without remembering anything; to classify
// many, use a Categorizer (or the KernelCategories fact).
func CategoryOf(t *trace.Trace, g int) string {
	ev := tritonEvidence{t: t}
	return categoryOf(t, g, Category(t.GPU[g].Name), &ev)
}

// Categorizer classifies the GPU activities of one trace as CategoryOf
// does, remembering what each Python frame, op and host thread says about
// Triton, so that classifying every activity of a trace costs one pass
// over its activities, frames, ops and ranges.
type Categorizer struct {
	t  *trace.Trace
	ev tritonEvidence
}

// NewCategorizer returns a Categorizer over t.
func NewCategorizer(t *trace.Trace) *Categorizer {
	return &Categorizer{t: t, ev: newTritonEvidence(t)}
}

// Of returns CategoryOf(t, g).
func (c *Categorizer) Of(g int) string {
	return categoryOf(c.t, g, Category(c.t.GPU[g].Name), &c.ev)
}

// TritonEvidence reports whether GPU activity g's launch shows Triton
// launched it (see tritonEvidence.launch): what CategoryOf reads besides
// the activity's name, kind, launch call and launching op.
func (c *Categorizer) TritonEvidence(g int) bool { return c.ev.launch(g) }

// categoryOf is CategoryOf with the name's category already known (the
// index caches it per name: classifying is string work) and the trace's
// Triton evidence at hand.
func categoryOf(t *trace.Trace, g int, c string, ev *tritonEvidence) string {
	a := &t.GPU[g]
	switch a.Kind {
	case trace.Memcpy:
		return CategoryCopy
	case trace.Memset:
		return CategoryMemset
	}
	if (c == CategoryCustom || c == CategoryGEMM) && isTritonLaunch(t, g, ev) {
		return CategoryTriton
	}
	if c == CategoryConv && attentionOp(t, g) {
		// cuDNN names its fused-attention helpers like its convolution
		// kernels; the op that launched them says what they compute.
		return CategoryAttention
	}
	if c == CategoryCustom {
		// A kernel whose name says nothing (a user's "ew_sin") is what
		// the op that launched it does.
		if op := t.LaunchOp(trace.Index(g)); op != trace.None {
			if oc := opCategory(t.Ops[op].Name); oc != "" {
				return oc
			}
		}
	}
	return c
}

// attentionOp reports whether GPU activity g was launched inside a
// scaled-dot-product attention op.
func attentionOp(t *trace.Trace, g int) bool {
	for op := t.LaunchOp(trace.Index(g)); op != trace.None; op = t.Ops[op].Parent {
		n := strings.ToLower(t.Ops[op].Name)
		if strings.Contains(n, "scaled_dot_product") || strings.Contains(n, "attention") {
			return true
		}
	}
	return false
}

// opCategory classifies a framework op ("aten::mul", "capture::sin") by
// the kind of kernel it launches, or "" when its name does not tell.
func opCategory(op string) string {
	if i := strings.LastIndex(op, "::"); i >= 0 {
		op = op[i+2:]
	}
	op = strings.TrimSuffix(strings.ToLower(op), "_")
	base, _, _ := strings.Cut(op, "_") // mul_sigma → mul
	switch {
	case elementwiseOps[op] || elementwiseOps[base]:
		return CategoryElementwise
	case rngOps[op] || rngOps[base]:
		return CategoryRNG
	case copyOps[op]:
		return CategoryCopy
	}
	return ""
}

var (
	elementwiseOps = setOf("add", "sub", "mul", "div", "neg", "abs", "sign", "sin", "cos", "tan", "exp", "log", "sqrt", "rsqrt", "pow",
		"tanh", "sigmoid", "relu", "gelu", "silu", "leaky", "clamp", "where", "fill", "zero", "ones", "zeros", "full", "scale", "maximum",
		"minimum", "reciprocal", "erf", "bias", "threshold", "hardtanh", "elu", "softplus", "lerp", "addcmul", "addcdiv")
	rngOps  = setOf("randn", "rand", "randint", "normal", "uniform", "bernoulli", "dropout", "rng", "random", "multinomial")
	copyOps = setOf("copy", "clone", "contiguous", "to", "repeat", "repeat_interleave", "expand", "cat", "stack", "index", "index_select",
		"gather", "scatter", "transpose", "permute", "embedding", "take")
)

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

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

// LibraryKernel reports whether a kernel comes from a vendor or framework
// library (cuBLAS, cuBLASLt, CUTLASS, cuDNN, NCCL, ATen, FlashAttention)
// rather than from the user's own CUDA or Triton code.
func LibraryKernel(name string) bool {
	n := strings.ToLower(name)
	if blasKernelName(n) {
		return true
	}
	for _, s := range []string{"nvjet", "xmma", "cutlass", "cublas", "gemmk1", "gemv", "magma", "cudnn",
		"nccl", "ampere_", "volta_", "turing_", "hopper_", "sm80_", "sm90_", "sm86_", "sm89_", "sm100_", "at::native", "kernel2", "flash",
		"fmha", "cub::", "thrust::", "at_cuda_detail", "c10::", "cijk_", "hipblaslt", "rocblas", "miopen", "rccl", "ck::", "composable_kernel"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// blasKernelName reports whether a lower-case kernel name is one of
// cuBLAS's BLAS-named kernels: the routine (sgemm, hgemm, dgemm, cgemm,
// zgemm) starts its function name, alone or after an architecture prefix
// (sgemm_largek_lds64, maxwell_sgemm_128x64_nt, volta_hgemm_…). A user's
// kernel that only contains the routine's name (CuPy's naive_sgemm, a C++
// extension's tiled_dgemm_kernel) is not cuBLAS's.
func blasKernelName(n string) bool {
	f := kernelFunc(n)
	if i := strings.LastIndex(f, "::"); i >= 0 {
		f = f[i+2:]
	}
	if arch, rest, ok := strings.Cut(f, "_"); ok && gpuArch(arch) {
		f = rest
	}
	for _, r := range []string{"sgemm", "hgemm", "dgemm", "cgemm", "zgemm"} {
		if strings.HasPrefix(f, r) {
			return true
		}
	}
	return false
}

// gpuArch reports whether a word names an NVIDIA GPU architecture as
// cuBLAS's kernel names do (maxwell, volta, sm80, …).
func gpuArch(w string) bool {
	switch w {
	case "kepler", "maxwell", "pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell":
		return true
	}
	if d, ok := strings.CutPrefix(w, "sm"); ok && d != "" {
		return strings.Trim(d, "0123456789") == "" || strings.Trim(strings.TrimRight(d, "abf"), "0123456789") == ""
	}
	return false
}

// memoryBound reports whether kernels of category c are memory-bound by
// nature (their cost is bytes moved, so fusing them saves most of it).
func memoryBound(c string) bool {
	switch c {
	case CategoryElementwise, CategoryRNG, CategoryCopy, CategoryReduction, CategoryMemset:
		return true
	}
	return false
}

// compilerFused reports whether a kernel is already a compiler's fusion
// (XLA's loop_*_fusion, Inductor's triton_*): fusing further is the
// compiler's business, not a change in the user's code.
func compilerFused(name string) bool {
	return strings.Contains(name, "fusion") || strings.HasPrefix(name, "triton_")
}

package analyze

import (
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

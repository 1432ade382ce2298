package analyze

import (
	"fmt"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// Thresholds of tf32-disabled.
const (
	// TF32MinShare is the share of GPU kernel time fp32 FFMA GEMMs must
	// take before the finding is worth reading.
	TF32MinShare = 0.05
	// TF32Speedup is the conservative speed-up assumed for a GEMM moved
	// from FFMA to TF32 tensor cores when its shape is unknown (the trace
	// has no input shapes) or the device's peaks are: the peak ratio is
	// ~7× on A100/H100, small or skinny GEMMs get less. A GEMM of known
	// shape gets tf32Speedup's instead.
	TF32Speedup = 2.0
	// TF32MinComputeMajor is the first compute capability with TF32
	// tensor cores (Ampere, 8.0).
	TF32MinComputeMajor = 8
)

// TF32Disabled detects fp32 GEMMs running on CUDA-core FFMA paths on GPUs
// that have TF32 tensor cores.
var TF32Disabled = &Analyzer{
	Name: "tf32-disabled",
	Doc: fmt.Sprintf("Reports fp32 GEMM kernels that run on the CUDA cores' FFMA path (cuBLAS sgemm, sm80_xmma_gemm_f32f32_..._ffma, "+
		"gemmk1_kernel<..., float, ...>) on a GPU of compute capability %d.0 or later, whose TF32 tensor cores would run them several "+
		"times faster, when they take at least %.0f%% of GPU kernel time. Saving model: each kernel's time × (1 − 1/speed-up), the "+
		"speed-up being its measured time over its GEMM shapes' FLOPs at %.0f%% of the device's TF32 peak (or their bytes at the peak "+
		"bandwidth, if longer); %.0f× for a kernel whose shape is unknown. GEMMs of scaled_dot_product_attention's math backend are "+
		"attention-backend's.", TF32MinComputeMajor, TF32MinShare*100, TF32Efficiency*100, TF32Speedup),
	Requires: []*Analyzer{Attribution},
	Run:      runTF32Disabled,
}

// ffmaGEMM reports whether a kernel name is an fp32 GEMM on the FFMA path.
func ffmaGEMM(name string) bool {
	n := strings.ToLower(name)
	switch {
	case strings.Contains(n, "tf32"):
		return false
	case strings.HasPrefix(n, "void gemmk1_kernel<int, float,") || strings.HasPrefix(n, "gemmk1_kernel<int, float,"):
		return true
	case strings.Contains(n, "gemv"):
		return false
	case strings.Contains(n, "sgemm") && LibraryKernel(name):
		// A library's (cuBLAS, CUTLASS simt): the TF32 flag reaches it.
		// A user's naive_sgemm does not read torch's TF32 setting.
		return true
	case strings.Contains(n, "f32f32") && strings.Contains(n, "ffma"):
		return true
	}
	return false
}

func runTF32Disabled(p *Pass) ([]Finding, error) {
	t := p.Trace
	r := p.Result
	var dev *trace.DeviceProperties
	if len(t.Meta.Devices) > 0 {
		dev = &t.Meta.Devices[0]
	}
	if dev == nil || dev.ComputeMajor < TF32MinComputeMajor {
		// Without a TF32-capable device (or without knowing the device)
		// there is nothing to switch on.
		return nil, nil
	}
	var total, saved float64
	var shaped int
	tb := NewTable(Col("kernel", KindName), Col("count", KindCount), Col("total", KindDuration), Col("ops", KindName), Col("python", KindSource))
	var names []string
	ops := map[string]int{}
	lines := map[string]int{}
	outsideMath := p.ix.launchedOutside(sdpaMathOp)
	for _, k := range r.Kernels {
		if !ffmaGEMM(k.Name) || !outsideMath[k.Name] {
			// GEMMs of scaled_dot_product_attention's math backend run
			// in fp32 by design: attention-backend's fix removes them.
			continue
		}
		total += k.TotalUs
		sp, ok := tf32Speedup(r, k.Name)
		if ok {
			shaped++
		} else {
			sp = TF32Speedup
		}
		saved += k.TotalUs * (1 - 1/sp)
		names = append(names, k.Name)
		tb.Add(NameCell(k.ShortName), Count(float64(k.Count)), DurUs(k.TotalUs), NameCell(strings.Join(k.Ops, ", ")), SourceCell(strings.Join(k.Python, "; ")))
		for _, o := range k.Ops {
			ops[o] += k.Count
		}
		for _, l := range k.Python {
			lines[l] += k.Count
		}
	}
	if total == 0 || r.Summary.GPUKernelUs == 0 || total/r.Summary.GPUKernelUs < TF32MinShare {
		return nil, nil
	}
	share := total / r.Summary.GPUKernelUs
	steps := float64(max(r.StepStats.Count, 1))
	saving := saved / steps
	where := strings.Join(topKeys(lines, MaxAttribution), "; ")
	if where == "" {
		where = strings.Join(topKeys(ops, MaxAttribution), ", ")
	}
	sev := Low
	if share > 0.3 {
		sev = Medium
	}
	return []Finding{{
		Title: fmt.Sprintf("fp32 GEMMs run on FFMA cores, not TF32 tensor cores: %.0f%% of GPU kernel time (%s)",
			share*100, fmtUs(total)),
		Subject:    "fp32 FFMA GEMMs",
		Severity:   sev,
		SavingUs:   saving,
		SavingFrom: FromKernelTime,
		Measures: []Measure{
			{"FFMA GEMM time", DurUs(total)},
			{"share of GPU kernel time", Percent(share)},
		},
		Evidence: []Evidence{
			{Text: fmt.Sprintf("%s is compute capability %d.%d: TF32 tensor cores are available but these fp32 GEMMs use FFMA kernels", dev.Name, dev.ComputeMajor, dev.ComputeMinor),
				Table: tb, Kernels: names},
			{Text: tf32ModelText(shaped, len(names), total, saved)},
		},
		Fix:        tf32Fix(t, where),
		Confidence: High,
	}}, nil
}

func tf32Fix(t *trace.Trace, where string) string {
	if cudaC(t) {
		return fmt.Sprintf("enable TF32 for the fp32 GEMMs (%s): cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH), or cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32", where)
	}
	return fmt.Sprintf("enable TF32 for the fp32 matmuls (%s): torch.set_float32_matmul_precision(\"high\") or "+
		"torch.backends.cuda.matmul.allow_tf32 = True at start-up, or run them under torch.autocast(\"cuda\", dtype=torch.bfloat16)", where)
}

// launchedOutside returns the kernel names with at least one launch not
// under an op named op.
func (ix *index) launchedOutside(op string) map[string]bool {
	out := map[string]bool{}
	// Each name's answer so far found by the name's address (nameCache),
	// not by hashing it per activity.
	var found nameCache[*bool]
	newFound := func(string) *bool { return new(bool) }
	for g := range ix.t.GPU {
		name := ix.t.GPU[g].Name
		if f := found.get(name, newFound); !*f && ix.opNamed(ix.opOf(g), op) == trace.None {
			*f = true
			out[name] = true
		}
	}
	return out
}

// tf32ModelText states the saving model as applied: how many kernels' TF32
// speed-up came from their GEMM shapes, and the overall speed-up.
func tf32ModelText(shaped, kernels int, total, saved float64) string {
	overall := 1.0
	if total > saved {
		overall = total / (total - saved)
	}
	return fmt.Sprintf("saving model: each FFMA GEMM's time × (1 − 1/speed-up), %.1f× overall; for %d of %d kernels the speed-up is their "+
		"measured time over their GEMM shapes' FLOPs at %.0f%% of the device's TF32 peak (or their bytes at its peak bandwidth, if longer), "+
		"for the rest a conservative %.0f×", overall, shaped, kernels, TF32Efficiency*100, TF32Speedup)
}

package analyze

import (
	"fmt"
	"strings"
)

// FP64MinShare is the share of GPU kernel time fp64 kernels must take for
// fp64-compute to report them.
const FP64MinShare = 0.1

// FP64Compute finds kernels computing in double precision.
var FP64Compute = &Analyzer{
	Name: "fp64-compute",
	Doc: fmt.Sprintf("Finds kernels that compute in double precision (ATen kernels instantiated for double, cuBLAS dgemm/f64 kernels), "+
		"reported when they take at least %.0f%% of GPU kernel time. Saving model: memory-bound fp64 kernels move twice the bytes of "+
		"fp32 (half their time saved); fp64 GEMMs run at the device's fp64 rate instead of its fp32 (or TF32) rate (time × (1 − "+
		"fp64 peak / TF32 peak): in fp32 the fix enables TF32 tensor cores; the fp32 peak on devices without TF32, half when the device is unknown).", FP64MinShare*100),
	Run: runFP64Compute,
}

// fp64Kernel reports whether a kernel name says it computes in double.
func fp64Kernel(name string) bool {
	n := strings.ToLower(name)
	if strings.Contains(n, "dgemm") || strings.Contains(n, "f64f64") || strings.Contains(n, "zgemm") {
		return true
	}
	// ATen instantiations name the element type as a template argument
	// (AbsFunctor<double>, ReduceOp<double, ...>) or a lambda parameter
	// (lambda(double)#1); a bare ", double," is a scalar argument of some
	// function in the signature (normal_kernel's mean and std), not data.
	for _, pat := range []string{"<double", "(double)", " double>"} {
		if strings.Contains(name, pat) {
			return true
		}
	}
	return false
}

func runFP64Compute(p *Pass) ([]Finding, error) {
	r := p.Result
	if r.Summary.GPUKernelUs == 0 {
		return nil, nil
	}
	ratio, vs := gemmFP32Ratio(PeakFor(r.Device))
	var total, saving float64
	tb := NewTable(Col("kernel", KindName), Col("category", KindName), Col("count", KindCount), Col("total", KindDuration), Col("ops", KindName), Col("python", KindSource))
	var names, lines []string
	for _, k := range r.Kernels {
		if !fp64Kernel(k.Name) {
			continue
		}
		total += k.TotalUs
		s := k.TotalUs * 0.5
		if k.Category == CategoryGEMM || k.Category == CategoryGEMV || k.Category == CategoryConv {
			s = k.TotalUs * ratio
		}
		saving += s
		names = append(names, k.Name)
		if len(tb.Rows) < 10 {
			tb.Add(NameCell(k.ShortName), NameCell(k.Category), Count(float64(k.Count)), DurUs(k.TotalUs), NameCell(strings.Join(k.Ops, ", ")), SourceCell(strings.Join(k.Python, "; ")))
		}
		for _, l := range k.Python {
			if len(lines) < MaxAttribution && !containsStr(lines, l) {
				lines = append(lines, l)
			}
		}
	}
	share := total / r.Summary.GPUKernelUs
	if share < FP64MinShare {
		return nil, nil
	}
	steps := float64(max(r.StepStats.Count, 1))
	saving /= steps
	where := strings.Join(lines, "; ")
	if where == "" {
		where = "the code that creates the float64 tensors"
	}
	return []Finding{{
		Title:      fmt.Sprintf("%.0f%% of GPU kernel time (%s) computes in fp64", share*100, fmtUs(total)),
		Subject:    "fp64 kernels",
		Severity:   severityByShare(p.shareOfStep(saving)),
		SavingUs:   saving,
		SavingFrom: FromKernelTime,
		Measures: []Measure{
			{"fp64 kernel time", DurUs(total)},
			{"share of GPU kernel time", Percent(share)},
		},
		Evidence: []Evidence{
			{Text: "kernels instantiated for double precision:", Table: tb, Kernels: names},
			{Text: fmt.Sprintf("saving model: half the time of memory-bound fp64 kernels (half the bytes in fp32) and (1 − fp64/%s peak) = %.0f%% of fp64 GEMM time (same efficiency against the peak the fix runs at)", vs, ratio*100)},
		},
		Fix: fmt.Sprintf("use float32 with TF32 matmuls (torch.backends.cuda.matmul.allow_tf32 = True) or bf16 under autocast at %s unless the algorithm needs fp64: create tensors with dtype=torch.float32, "+
			"watch for numpy float64 arrays passed to torch.from_numpy and for torch.set_default_dtype(torch.float64); keep fp64 only for the accumulations that need it",
			where),
		Confidence: High,
	}}, nil
}

// gemmFP32Ratio returns the share of fp64 GEMM time that running the GEMM
// in fp32 saves, and the peak it compares against: GEMMs in fp32 run on
// the tensor cores as TF32 once the fix enables it (fp64's own fix says
// so), so the time scales by the fp64/TF32 peak ratio (same efficiency);
// a device without TF32 compares with its fp32 peak, an unknown one
// assumes half.
func gemmFP32Ratio(pk *Peak) (float64, string) {
	if pk == nil {
		return 0.5, "assumed 2× fp32"
	}
	for _, dt := range []string{"tf32", "fp32"} {
		if f := pk.TFLOPS[dt]; f > 0 && pk.TFLOPS["fp64"] > 0 {
			return 1 - min(pk.TFLOPS["fp64"]/f, 1), strings.ToUpper(dt)
		}
	}
	return 0.5, "assumed 2× fp32"
}

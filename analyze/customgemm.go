package analyze

import (
	"fmt"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// Thresholds of custom-gemm.
const (
	// CustomGEMMMinShare is the share of GPU kernel time a hand-written
	// GEMM-like kernel must take to be reported.
	CustomGEMMMinShare = 0.1
	// CustomGEMMDominantShare makes a custom kernel GEMM-like by weight
	// alone when its name does not say so.
	CustomGEMMDominantShare = 0.5
	// CustomGEMMSpeedup is the conservative speed-up assumed from moving
	// an untiled GEMM to a library (cuBLAS) kernel; untiled kernels
	// re-read every operand from DRAM/L2 for each multiply-add and are
	// typically 5–50× slower.
	CustomGEMMSpeedup = 5.0
	// CustomGEMMMinMeanUs is how long (µs) a dominant kernel without a
	// GEMM-like name must run per call to count as GEMM-like work: short
	// kernels that dominate a trace are usually elementwise or empty.
	CustomGEMMMinMeanUs = 100.0
)

// CustomGEMM detects hand-written GEMM kernels that a library does better.
var CustomGEMM = &Analyzer{
	Name: "custom-gemm",
	Doc: fmt.Sprintf("Reports a hand-written CUDA kernel (not cuBLAS/cuBLASLt/CUTLASS/cuDNN/ATen, not Triton) that does GEMM-like work "+
		"(its name or launching op says gemm/matmul/linear/dot/mm, or it alone takes over %.0f%% of GPU kernel time at %.0f µs or more a call "+
		"under a framework op that is not elementwise, RNG or copy) without tiling: "+
		"it uses no shared memory, so every thread reads its operands from global memory for each multiply-add. Reported when it "+
		"takes at least %.0f%% of GPU kernel time. A trace that does not record the kernel's launch arguments (grid and block "+
		"all zero, as ROCm and some CUDA-graph replays write) is no evidence of missing tiling: such kernels are not reported. Saving model: its time × (1 − 1/%.0f), a conservative speed-up for a library GEMM "+
		"(when the trace also measures a library GEMM launched by an op with the same input shapes, the difference of their times is used instead).",
		CustomGEMMDominantShare*100, CustomGEMMMinMeanUs, CustomGEMMMinShare*100, CustomGEMMSpeedup),
	Requires: []*Analyzer{CustomGEMMKernels, Attribution},
	Run:      runCustomGEMM,
}

func runCustomGEMM(p *Pass) ([]Finding, error) {
	t, ix, r := p.Trace, p.ix, p.Result
	cf, err := p.customGEMMFacts()
	if err != nil {
		return nil, err
	}
	var out []Finding
	steps := float64(max(r.StepStats.Count, 1))
	for _, c := range cf.kernels {
		k, g, opName, byName, a := c.k, c.g, c.opName, c.byName, c.launch
		perStep, calls := steadyKernelUs(k, steps)
		saving := perStep * (1 - 1/CustomGEMMSpeedup)
		model := fmt.Sprintf("saving model: its %s per steady step × (1 − 1/%.0f) for a library GEMM", fmtUs(perStep), CustomGEMMSpeedup)
		if sp, fast := measuredSpeedup(r, k.Name); sp > 1 {
			// The roofline measured this work through a library op too.
			saving = perStep * (1 - 1/sp)
			model = fmt.Sprintf("saving model: its %s per steady step × (1 − 1/%.1f), the speed-up %s measured on the same GEMM shape in this trace",
				fmtUs(perStep), sp, fast)
		} else if lib, n := sameShapeLibrary(t, ix, g); n > 0 && lib < k.MeanUs {
			// Measured beats assumed: a library kernel of the same
			// shapes in this trace shows what the fix delivers.
			saving = (k.MeanUs - lib) * calls
			model = fmt.Sprintf("saving model: (its mean %s − %s, the median of %d library GEMM calls on the same input shapes in this trace) × %.1f calls per steady step",
				fmtUs(k.MeanUs), fmtUs(lib), n, calls)
		}
		why := "its name says it multiplies matrices"
		if !byName {
			why = fmt.Sprintf("it alone takes %.0f%% of GPU kernel time", k.Share*100)
		} else if !gemmLikeName(k.Name) {
			why = "it is launched by " + opName
		}
		where := strings.Join(k.Python, "; ")
		if where == "" {
			where = ix.launchSite(g)
		}
		out = append(out, Finding{
			Title: fmt.Sprintf("hand-written GEMM %s: %.0f%% of GPU time, %d calls of %s",
				ClipName(k.ShortName, 40), k.Share*100, k.Count, fmtUs(k.MeanUs)),
			Subject:    k.Name,
			Severity:   High,
			SavingUs:   saving,
			SavingFrom: FromKernelTime,
			Measures: []Measure{
				{"calls", Count(float64(k.Count))},
				{"mean time", DurUs(k.MeanUs)},
				{"total time", DurUs(k.TotalUs)},
				{"share of GPU kernel time", Percent(k.Share)},
			},
			Evidence: []Evidence{
				{Text: fmt.Sprintf("%s is not a library kernel and %s; launch: grid %v × block %v, %d registers per thread, 0 bytes of shared memory (no tiling: operands come from global memory for every multiply-add)",
					k.ShortName, why, a.Grid, a.Block, a.Registers), Kernels: []string{k.Name}},
				{Text: fmt.Sprintf("%d calls, mean %s, %s in total (%.0f%% of GPU kernel time); launched from %s", k.Count, fmtUs(k.MeanUs), fmtUs(k.TotalUs), k.Share*100, where)},
				{Text: model},
			},
			Fix:        customGEMMFix(t, k.ShortName, where),
			Confidence: High,
		})
	}
	return out, nil
}

// launchSite names where GPU activity g was launched from: the user's
// Python line, else the innermost frame, else the op.
func (ix *index) launchSite(g int) string {
	if l := ix.userLine(g); l != "" {
		return l
	}
	if f := ix.frameOf(g); f != -1 {
		return ix.t.Frames[f].Name
	}
	if op := ix.opOf(g); op != -1 {
		return ix.t.Ops[op].Name
	}
	return "an unknown call site"
}

// customGEMMFix names the library call in the user's language: cuBLAS for
// a CUDA C program, torch ops for PyTorch.
func customGEMMFix(t *trace.Trace, kernel, where string) string {
	if cudaC(t) {
		return fmt.Sprintf("replace %s (launched from %s) with cublasSgemm/cublasGemmEx, or cublasLt with a bias+ReLU epilogue so the elementwise part fuses; "+
			"if it must stay custom, tile it through shared memory and registers so each operand is loaded once per tile", kernel, where)
	}
	return fmt.Sprintf("replace %s (launched from %s) with a library GEMM plus epilogue: torch.addmm/F.linear (cuBLAS) followed by the elementwise part "+
		"(or torch.compile, which fuses it as a GEMM epilogue); if it must stay custom, tile it through shared memory (or write it in Triton with tl.dot) so each operand is loaded once per tile",
		kernel, where)
}

// steadyKernelUs returns kernel k's GPU time and calls per steady-state
// step; over the whole trace divided by steps when it has no per-step
// figures.
func steadyKernelUs(k *Kernel, steps float64) (float64, float64) {
	if len(k.PerStep) == 0 {
		return k.TotalUs / steps, float64(k.Count) / steps
	}
	return k.SteadyPerStep()
}

// SteadyPerStep returns the kernel's mean GPU time and launches per
// steady-state step (the steps after the first, or the only one; zero
// without per-step figures): the per-step figure faces quote.
func (k *Kernel) SteadyPerStep() (us, launches float64) {
	first := FirstSteady(len(k.PerStep))
	steady := k.PerStep[first:]
	if len(steady) == 0 {
		return 0, 0
	}
	for _, ps := range steady {
		us += ps.Us
		launches += float64(ps.Count)
	}
	return us / float64(len(steady)), launches / float64(len(steady))
}

// sameShapeLibrary returns the median time of library GEMM kernels
// launched by ops with the same input shapes as the op that launched
// GPU activity g, and how many; 0, 0 when g's op records no shapes or
// none matches.
func sameShapeLibrary(t *trace.Trace, ix *index, g int) (float64, int) {
	op := ix.opOf(g)
	if op == trace.None || t.Ops[op].InputDims == "" || t.Ops[op].InputDims == "[]" {
		return 0, 0
	}
	dims := t.Ops[op].InputDims
	var v []float64
	for i := range t.GPU {
		a := &t.GPU[i]
		if o := ix.opOf(i); o != trace.None && o != op && a.Kind == trace.Kernel && t.Ops[o].InputDims == dims &&
			LibraryKernel(a.Name) && gemmLikeName(a.Name) {
			v = append(v, us(a.Dur()))
		}
	}
	return median(v), len(v)
}

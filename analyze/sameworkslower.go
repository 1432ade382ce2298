package analyze

import "fmt"

// SameWorkFindingGap is how many times the faster implementation's
// throughput the slower must fall behind, when the slower is not a
// library kernel, for same-work-slower to report it (two library
// kernels of one shape differ by layout and transposes, not by choice).
const SameWorkFindingGap = 2.0

// SameWorkSlower reports the slower of two implementations of one GEMM
// shape and dtype in the trace (Result.SameWork): the comparison the
// roofline already makes, as a finding with a saving, so the summary never
// shows "2.7× slower" beside "no finding".
var SameWorkSlower = &Analyzer{
	Name: "same-work-slower",
	Doc: fmt.Sprintf("When the trace runs one GEMM shape and dtype through two implementations (two roofline rows: a library op and a "+
		"Triton or custom kernel, two kernel configurations) and the faster reaches %.1f× the slower's TFLOP/s or more, the slower "+
		"being no library kernel, reports the slower. Saving model: its GPU time per step × (1 − slow/fast throughput), what running "+
		"that work at the faster one's rate saves. A kernel custom-gemm reports is left to it (which then uses this measured speed-up).", SameWorkFindingGap),
	Requires: []*Analyzer{CustomGEMMKernels},
	Run:      runSameWorkSlower,
}

func runSameWorkSlower(p *Pass) ([]Finding, error) {
	r := p.Result
	steps := float64(max(r.StepStats.Count, 1))
	custom, err := p.customGEMMFacts()
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, sw := range r.SameWork {
		slow, ok := rooflineRow(r.Roofline, sw.Slow, sw.Shape, sw.DType)
		if !ok || sw.Speedup < SameWorkFindingGap || LibraryKernel(slow.Kernel) || custom.Has(slow.Kernel) {
			continue
		}
		gpu := float64(slow.Calls) * slow.MeanUs / steps
		saving := gpu * (1 - 1/sw.Speedup)
		out = append(out, Finding{
			Title: fmt.Sprintf("%s is %.1f× slower than %s on the same %s GEMM shape", ClipName(sw.Slow, 36), sw.Speedup,
				ClipName(sw.Fast, 24), sw.DType),
			Subject:    sw.Slow + " vs " + sw.Fast,
			Severity:   severityByShare(p.shareOfStep(saving)),
			SavingUs:   saving,
			SavingFrom: FromKernelTime,
			Measures: []Measure{
				{"slower implementation TFLOP/s", Rate(sw.SlowTFLOPS, "TFLOP/s")},
				{"faster implementation TFLOP/s", Rate(sw.FastTFLOPS, "TFLOP/s")},
				{"slower implementation GPU time per step", DurUs(gpu)},
			},
			Evidence: []Evidence{
				{Text: fmt.Sprintf("%s %s: %s reaches %.0f TFLOP/s (%.1f%% of peak), %s %.0f (%.1f%%), over %d calls of %s", sw.Shape, sw.DType,
					sw.Fast, sw.FastTFLOPS, sw.FastEfficiency*100, sw.Slow, sw.SlowTFLOPS, sw.SlowEfficiency*100, slow.Calls, fmtUs(slow.MeanUs)),
					Kernels: []string{slow.Kernel}},
				{Text: "saving model: the slower implementation's GPU time per step at the faster one's throughput"},
			},
			Fix: fmt.Sprintf("run this shape through the faster implementation (%s), or tune %s to its rate (for a Triton kernel: block "+
				"sizes, num_warps and num_stages for this shape; for a hand-written one: tiling and tensor-core instructions)", sw.Fast, sw.Slow),
			Confidence: Medium,
		})
	}
	return out, nil
}

package report

import (
	"fmt"

	"github.com/tracelens/tracelens/analyze"
)

func (d *doc) roofline(r *analyze.Result) {
	d.heading(2, "Roofline")
	if len(r.Roofline) == 0 {
		switch {
		case !hasGPU(r):
			d.para("No GPU kernels: nothing to place on the roofline.")
		default:
			d.para("No GEMM-like op with known FLOPs. Record with `record_shapes=True` (and `with_flops=True`) so shapes, and from them FLOPs and bytes, are known.")
		}
		return
	}
	first := r.Roofline[0]
	d.para("Each row is one op shape; FLOPs and bytes are per call, bytes assume each operand and the result cross DRAM once. Peaks are the device's dense peak for the row's dtype and its DRAM bandwidth (%.0f GB/s); an op below the ridge point (FLOP/byte) is memory bound.", first.PeakGBps)
	tb := newTable(right("#"), left("Op"), left("Shape"), left("dtype"), left("Kernel"), right("Calls"), right("Mean"), right("TFLOP/s"), right("GB/s"), right("FLOP/byte"), right("Ridge"), left("Bound"), right("Peak TFLOP/s"), right("% of peak"))
	for i, row := range r.Roofline {
		tb.add(fmt.Sprint(i+1), Code(row.Op), Code(row.Shape), Text(row.DType), Code(shorten(analyze.ShortKernelName(row.Kernel), 48)), count(float64(row.Calls)), us(row.MeanUs),
			sig(row.TFLOPS), fmt.Sprintf("%.0f", row.GBps), sig(row.Intensity), fmt.Sprintf("%.0f", row.Ridge), Text(row.Bound),
			fmt.Sprintf("%.0f", row.PeakTFLOPS), pct(row.Efficiency))
	}
	d.table(tb)
	for _, line := range sameShape(r.Roofline) {
		d.b.WriteString("- " + line + "\n")
	}
	if len(sameShape(r.Roofline)) > 0 {
		d.b.WriteString("\n")
	}
	d.chart("", func() string { return rooflineSVG(r.Roofline) })
}

// sameShape compares implementations of the same work: rows with one
// shape and dtype (a library GEMM and hand-written variants of it) whose
// throughput differs by 20% or more, fastest against slowest.
func sameShape(rows []analyze.RooflineRow) []string {
	type group struct{ best, worst analyze.RooflineRow }
	var keys []string
	groups := map[string]*group{}
	for _, r := range rows {
		if r.TFLOPS <= 0 {
			continue
		}
		k := r.Shape + "\x00" + r.DType
		g, ok := groups[k]
		if !ok {
			keys = append(keys, k)
			groups[k] = &group{r, r}
			continue
		}
		if r.TFLOPS > g.best.TFLOPS {
			g.best = r
		}
		if r.TFLOPS < g.worst.TFLOPS {
			g.worst = r
		}
	}
	var out []string
	for _, k := range keys {
		g := groups[k]
		if g.best.Op == g.worst.Op || g.best.TFLOPS < 1.2*g.worst.TFLOPS {
			continue
		}
		out = append(out, fmt.Sprintf("**Same work, %s %s: %s reaches %s TFLOP/s (%s of peak), %s only %s (%s), %.1f× slower.**",
			Code(g.best.Shape), Text(g.best.DType), Code(g.best.Op), sig(g.best.TFLOPS), pct(g.best.Efficiency), Code(g.worst.Op), sig(g.worst.TFLOPS), pct(g.worst.Efficiency), g.best.TFLOPS/g.worst.TFLOPS))
		if len(out) == 3 {
			break
		}
	}
	return out
}

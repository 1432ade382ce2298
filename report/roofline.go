package report

import (
	"fmt"
	"strings"

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
	d.para("Each row is one op shape; FLOPs and bytes are per call, bytes assume each operand and the result cross DRAM once. Peaks are the device's dense peak for the row's dtype and its DRAM bandwidth (%s); an op below the ridge point (FLOP/byte) is memory bound.", bandwidthNote(first.PeakGBps))
	tb := newTable(right("#"), left("Op"), left("Shape"), left("dtype"), left("Kernel"), right("Calls"), right("Mean"), right("TFLOP/s"), right("GB/s"), right("FLOP/byte"), right("Ridge"), left("Bound"), right("Peak TFLOP/s"), right("% of peak"))
	for i, row := range r.Roofline {
		ridge, bound, peak, eff := peakCells(row)
		tb.add(fmt.Sprint(i+1), Code(row.Op), Code(row.Shape), Text(row.DType), Code(shorten(analyze.ShortKernelName(row.Kernel), 48)), count(float64(row.Calls)), us(row.MeanUs),
			sig(row.TFLOPS), fmt.Sprintf("%.0f", row.GBps), sig(row.Intensity), ridge, Text(bound), peak, eff)
	}
	d.table(tb)
	if src := peakSources(r.Roofline); src != "" {
		d.para("Peaks: %s.", src)
	}
	for _, line := range sameShape(r.SameWork) {
		d.b.WriteString("- " + line + "\n")
	}
	if len(sameShape(r.SameWork)) > 0 {
		d.b.WriteString("\n")
	}
	d.chart("", func() string { return rooflineSVG(r.Roofline) })
}

// sameShape is the summary's bullets comparing implementations of the
// same work (analyze's SameWork: one shape and dtype, fastest against
// slowest).
func sameShape(ws []analyze.SameWork) []string {
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		out = append(out, fmt.Sprintf("**Same work, %s %s: %s reaches %s TFLOP/s (%s of peak), %s only %s (%s), %.1f× slower.**",
			Code(w.Shape), Text(w.DType), Code(w.Fast), sig(w.FastTFLOPS), pct(w.FastEfficiency), Code(w.Slow), sig(w.SlowTFLOPS), pct(w.SlowEfficiency), w.Speedup))
	}
	return out
}

// peakSources lists the distinct datasheets (or "device unknown") the
// rows' peaks come from, in row order.
func peakSources(rows []analyze.RooflineRow) string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rows {
		if r.PeakSource != "" && !seen[r.PeakSource] {
			seen[r.PeakSource] = true
			out = append(out, Text(r.PeakSource))
		}
	}
	return strings.Join(out, "; ")
}

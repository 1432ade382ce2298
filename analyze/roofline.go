package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// gemmFLOPs returns the FLOPs of one call of a GEMM-like op from its input
// shapes, and the bytes its operands and result occupy, or 0 when the op or
// shapes are not a GEMM it knows.
func gemmFLOPs(op, dims string, elem int64) (flops, bytes float64, shape string) {
	d := parseDims(dims)
	mat := func(s []int64) bool { return len(s) == 2 }
	var b, m, k, n int64
	switch op {
	case "aten::mm", "aten::matmul":
		if len(d) < 2 || !mat(d[0]) || !mat(d[1]) || d[0][1] != d[1][0] {
			return 0, 0, ""
		}
		b, m, k, n = 1, d[0][0], d[0][1], d[1][1]
	case "aten::addmm":
		if len(d) < 3 || !mat(d[1]) || !mat(d[2]) || d[1][1] != d[2][0] {
			return 0, 0, ""
		}
		b, m, k, n = 1, d[1][0], d[1][1], d[2][1]
	case "aten::bmm", "aten::baddbmm":
		i := 0
		if op == "aten::baddbmm" {
			i = 1
		}
		if len(d) < i+2 || len(d[i]) != 3 || len(d[i+1]) != 3 || d[i][2] != d[i+1][1] {
			return 0, 0, ""
		}
		b, m, k, n = d[i][0], d[i][1], d[i][2], d[i+1][2]
	case "aten::linear":
		if len(d) < 2 || len(d[0]) < 2 || !mat(d[1]) || d[0][len(d[0])-1] != d[1][1] {
			return 0, 0, ""
		}
		b, m, k, n = 1, numel(d[0][:len(d[0])-1]), d[1][1], d[1][0]
	default:
		return 0, 0, ""
	}
	flops = 2 * float64(b) * float64(m) * float64(n) * float64(k)
	bytes = float64(elem) * float64(b) * float64(m*k+k*n+m*n)
	if b > 1 {
		shape = fmt.Sprintf("%d×[%d×%d]·[%d×%d]", b, m, k, k, n)
	} else {
		shape = fmt.Sprintf("[%d×%d]·[%d×%d]", m, k, k, n)
	}
	return flops, bytes, shape
}

// gemmOps are the ops whose FLOPs gemmFLOPs knows, innermost first: the
// innermost one that launched the kernel is the one measured.
var gemmOps = []string{"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear"}

// roofline builds one row per (op, shape, dtype, kernel) from the GEMM ops'
// input shapes and the GPU time of the kernels they launched, then places
// GEMM-like kernels without an op (Triton, custom CUDA) against the GEMM
// shape measured in the same steps, stating that assumption.
func (ix *index) roofline() []RooflineRow {
	calls := ix.rooflineCalls()
	rg := &rooflineGroups{groups: map[rooflineKey]*rooflineGroup{}}
	// The shapes measured per step are gathered only for kernels without
	// an op to place: most traces have none.
	opless := ix.oplessKernels(calls)
	steps, entries := ix.opRows(calls, rg, len(opless) > 0)
	if len(opless) > 0 {
		ix.oplessRows(opless, shapesInStep(steps, entries), rg)
	}
	peak := PeakFor(ix.t.DeviceName())
	out := make([]RooflineRow, 0, len(rg.order))
	for _, key := range rg.order {
		out = append(out, rg.groups[key].finish(peak))
	}
	slices.SortFunc(out, func(a, b RooflineRow) int {
		if c := cmp.Compare(b.MeanUs*float64(b.Calls), a.MeanUs*float64(a.Calls)); c != 0 {
			return c
		}
		return cmp.Compare(a.Op+a.Kernel, b.Op+b.Kernel)
	})
	return out
}

// rooflineGroup is one roofline row being summed: its calls and GPU time.
type rooflineGroup struct {
	row   RooflineRow
	total trace.Duration
}

// rooflineGroups holds the rows by key, in first-seen order.
type rooflineGroups struct {
	groups map[rooflineKey]*rooflineGroup
	order  []rooflineKey
}

// rooflineKey names a row: an op's (op, shape, dtype, kernel) or, opless,
// a kernel's (range label, shape, kernel). A struct, not the names
// joined: a key per call, tens of thousands, was a string built each.
type rooflineKey struct {
	op, shape, dtype, kernel string
	opless                   bool
}

// shapeKey names a GEMM shape measured in a step: its shape and dtype.
type shapeKey struct{ shape, dtype string }

// group returns the row under key, made by newRow when the key is new.
func (rg *rooflineGroups) group(key rooflineKey, newRow func() RooflineRow) *rooflineGroup {
	gr := rg.groups[key]
	if gr == nil {
		gr = &rooflineGroup{row: newRow()}
		rg.groups[key] = gr
		rg.order = append(rg.order, key)
	}
	return gr
}

// add counts one call of gpu time to the row under key, made by newRow
// when the key is new.
func (rg *rooflineGroups) add(key rooflineKey, gpu trace.Duration, newRow func() RooflineRow) {
	gr := rg.group(key, newRow)
	gr.row.Calls++
	gr.total += gpu
}

// opShape returns what GEMM (or attention) op o computes per call and
// where its FLOPs come from. Shapes repeat (every layer, every step): the
// Shapes fact parses each once; attention ops are parsed here.
func (ix *index) opShape(o *trace.Op) (GEMMShape, string) {
	var pr GEMMShape
	src := "input dims"
	if slices.Contains(attentionOps, o.Name) {
		for _, ty := range parseTypes(o.InputTypes) {
			if elemSize(ty) > 0 {
				pr.DType = ty
				break
			}
		}
		pr.FLOPs, pr.Bytes, pr.Shape = attentionFLOPs(o.InputDims, elemSize(pr.DType))
		src = "input dims (attention counted as causal: a lower bound)"
	} else {
		pr = ix.GEMM(o)
	}
	if o.Flops > 0 {
		pr.FLOPs, src = o.Flops, "profiler"
	}
	return pr, src
}

// oplessKernels returns the GEMM-like kernels no framework op launched
// (Triton, hand-written CUDA), in GPU order: their FLOPs are unknown to
// the profiler. What the name says (a byte column's lookup) is asked
// first: most kernels are passed over without reading their record.
func (ix *index) oplessKernels(calls []rooflineCall) []int {
	t := ix.t
	var out []int
	for g := range t.GPU {
		if in := ix.info(g); in.library || !in.gemmLike || t.GPU[g].Kind != trace.Kernel {
			continue
		}
		if op := ix.opOf(g); hasCall(calls, op) || ix.underFrameworkOp(op) {
			// A framework op that is no GEMM op (aten::cudnn_convolution's
			// implicit_convolve_sgemm, a backward node's) computes its own
			// work, not the step's GEMM shape.
			continue
		}
		out = append(out, g)
	}
	return out
}

// oplessRows adds the kernels without an op (oplessKernels): when every
// step they run in measured exactly one GEMM shape, they are assumed to
// compute that one.
func (ix *index) oplessRows(opless []int, shapesInStep map[int32]map[shapeKey]*rooflineGroup, rg *rooflineGroups) {
	t := ix.t
	for _, g := range opless {
		a := &t.GPU[g]
		shapes := shapesInStep[ix.gpuStep[g]]
		if len(shapes) != 1 {
			continue
		}
		var ref RooflineRow
		for _, gr := range shapes {
			// The fields read below are the row's own, set when it was
			// made (its count and time are not).
			ref = gr.row
		}
		label := ix.rangeName(g)
		if label == "" {
			label = a.Name
		}
		rg.add(rooflineKey{op: label, shape: ref.Shape, kernel: a.Name, opless: true}, a.Dur(), func() RooflineRow {
			return RooflineRow{Op: label, Shape: ref.Shape, DType: ref.DType, Kernel: a.Name, FLOPs: ref.FLOPs, Bytes: ref.Bytes,
				FLOPsSource: "assumed: the " + ref.Op + " " + ref.Shape + " measured in the same steps", Python: ix.userLine(g)}
		})
	}
}

// underFrameworkOp reports whether op or an op around it is an ATen op or
// an autograd node (frameworkOp).
func (ix *index) underFrameworkOp(op trace.Index) bool {
	for ; op != trace.None; op = ix.t.Ops[op].Parent {
		if frameworkOp(ix.t.Ops[op].Name) {
			return true
		}
	}
	return false
}

// finish returns the group's row with its rates and, when the device's
// peaks are known (peak), its roof, bound and efficiency.
func (gr *rooflineGroup) finish(peak *Peak) RooflineRow {
	r := gr.row
	r.MeanUs = us(gr.total) / float64(r.Calls)
	if r.MeanUs > 0 {
		r.TFLOPS = r.FLOPs / (r.MeanUs * 1e-6) / 1e12
		r.GBps = r.Bytes / (r.MeanUs * 1e-6) / 1e9
	}
	if r.Bytes > 0 {
		r.Intensity = r.FLOPs / r.Bytes
	}
	r.PeakSource = "device not in the peak table: no roof"
	if peak != nil {
		r.PeakTFLOPS = peak.TFLOPS[r.DType]
		r.PeakGBps = peak.GBps
		r.PeakSource = peak.Source
	}
	if r.PeakTFLOPS > 0 && r.PeakGBps > 0 {
		r.Ridge = r.PeakTFLOPS * 1e12 / (r.PeakGBps * 1e9)
		if r.Intensity >= r.Ridge {
			r.Bound = "compute"
			r.Efficiency = r.TFLOPS / r.PeakTFLOPS
		} else {
			r.Bound = "memory"
			r.Efficiency = r.GBps / r.PeakGBps
		}
	}
	return r
}

// gemmLikeName reports whether a kernel's name says it multiplies matrices.
func gemmLikeName(name string) bool {
	n := strings.ToLower(kernelFunc(name))
	for _, s := range []string{"gemm", "matmul", "linear", "dot", "mm_"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// rangeName returns the innermost record_function range around GPU
// activity g's launch (not a ProfilerStep), or "".
func (ix *index) rangeName(g int) string {
	t := ix.t
	a := &t.GPU[g]
	if a.Launch == trace.None {
		return ""
	}
	c := &t.APICalls[a.Launch]
	best := -1
	// Annotations are sorted by (thread, start); the innermost enclosing
	// one is the last that starts before the call and contains it.
	i, _ := slices.BinarySearchFunc(t.Annotations, threadTime{c.Thread, c.Start + 1}, func(an trace.Annotation, k threadTime) int {
		if x := cmp.Compare(an.Thread, k.th); x != 0 {
			return x
		}
		return cmp.Compare(an.Start, k.at)
	})
	for j := i - 1; j >= 0 && t.Annotations[j].Thread == c.Thread; j-- {
		an := &t.Annotations[j]
		if an.End >= c.End && !strings.HasPrefix(an.Name, "ProfilerStep#") {
			best = j
			break
		}
		if strings.HasPrefix(an.Name, "ProfilerStep#") && an.End >= c.End {
			break
		}
	}
	if best < 0 {
		return ""
	}
	return t.Annotations[best].Name
}

// rooflineRow returns the roofline row of op on shape and dtype.
func rooflineRow(rows []RooflineRow, op, shape, dtype string) (RooflineRow, bool) {
	for _, row := range rows {
		if row.Op == op && row.Shape == shape && row.DType == dtype {
			return row, true
		}
	}
	return RooflineRow{}, false
}

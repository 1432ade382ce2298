package analyze

import (
	"fmt"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// LayoutMinShare is the share of the steady step's GPU time that layout
// conversions must take for layout-conversion to report them.
const LayoutMinShare = 0.1

// LayoutConversion finds GPU time spent converting tensors between memory
// formats around convolutions.
var LayoutConversion = &Analyzer{
	Name: "layout-conversion",
	Doc: fmt.Sprintf("In a trace that runs convolutions, sums the GPU time of layout conversions per steady step: copies launched by "+
		"aten::contiguous or a to(memory_format=...) (a permuted tensor made dense again) and cuDNN/MIOpen's own transposes around "+
		"convolutions (nchwToNhwc/nhwcToNchw kernels). Reported when they take at least %.0f%% of the step's GPU time. Saving model: "+
		"their GPU time per step, which one memory format end to end (channels_last for the model and its input) removes.",
		LayoutMinShare*100),
	Requires: []*Analyzer{Steps, KernelCategories, Attribution, OpClasses},
	Run:      runLayoutConversion,
}

// layoutKernel reports whether a kernel's name says it transposes between
// memory formats (cuDNN's and MIOpen's NCHW↔NHWC kernels).
func layoutKernel(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "nchwtonhwc") || strings.Contains(n, "nhwctonchw") || strings.Contains(n, "nchw2nhwc") ||
		strings.Contains(n, "nhwc2nchw") || strings.Contains(n, "transpose_nchw") || strings.Contains(n, "transpose_nhwc")
}

func runLayoutConversion(p *Pass) ([]Finding, error) {
	t, ix, r := p.Trace, p.ix, p.Result
	first := FirstSteady(len(t.Steps))
	steps := float64(len(t.Steps) - first)
	if len(t.Steps) == 0 || steps <= 0 {
		return nil, nil
	}
	conv := ix.categoryID(CategoryConv)
	if conv < 0 {
		return nil, nil // no convolution: nothing to convert for
	}
	oc, err := p.opClasses()
	if err != nil {
		return nil, err
	}
	var convUs, layoutUs, allUs float64
	kernels, lines := map[string]int{}, map[string]int{}
	// layoutKernel per distinct name (by its id): string work.
	byName := make([]int8, len(ix.names)) // 0 unknown, 1 yes, 2 no
	for g := range t.GPU {
		a := &t.GPU[g]
		if st := ix.gpuStep[g]; st < int32(first) || a.Kind != trace.Kernel {
			continue
		}
		id := ix.nameOf.at(g)
		if byName[id] == 0 {
			byName[id] = 2
			if layoutKernel(a.Name) {
				byName[id] = 1
			}
		}
		isLayout := byName[id] == 1
		d := us(a.Dur())
		allUs += d
		if int(ix.cat[g]) == conv && !isLayout {
			convUs += d
		}
		// aten::contiguous (what .contiguous() and
		// .contiguous(memory_format=...) record) makes a permuted tensor
		// dense again.
		opName, byOp := "aten::contiguous", false
		if op := ix.opOf(g); op != trace.None {
			byOp = oc.enclosing(op, opIsContiguous) != trace.None
		}
		if !isLayout && !byOp {
			continue
		}
		layoutUs += d
		if !byOp {
			opName = "cuDNN around the convolution"
		}
		kernels[ShortKernelName(a.Name)+" ("+opName+")"]++
		if l := ix.userLine(g); l != "" {
			lines[l]++
		}
	}
	if convUs == 0 || allUs == 0 || layoutUs < LayoutMinShare*allUs {
		return nil, nil
	}
	return []Finding{layoutFinding(layoutUs/steps, convUs/steps, allUs/steps, r.StepStats.SteadyWallUs, kernels, lines)}, nil
}

// layoutFinding builds layout-conversion's finding from per-step times.
func layoutFinding(layout, conv, all, step float64, kernels, lines map[string]int) Finding {
	tb := NewTable(Col("conversion kernel (op)", KindName), Col("launches", KindCount))
	for _, k := range topKeys(kernels, 5) {
		tb.Add(NameCell(k), Count(float64(kernels[k])))
	}
	where := strings.Join(topKeys(lines, 3), "; ")
	if where == "" {
		where = "the ops above"
	}
	return Finding{
		Title: fmt.Sprintf("layout conversions take %.0f%% of GPU time (%s per step) against %s in the convolutions", layout/all*100,
			fmtUs(layout), fmtUs(conv)),
		Subject:    "memory-format conversions around convolutions",
		Severity:   severityByShare(layout / max(step, all)),
		SavingUs:   layout,
		SavingFrom: FromKernelTime,
		Measures: []Measure{
			{"layout conversion GPU time per step", DurUs(layout)},
			{"convolution GPU time per step", DurUs(conv)},
			{"share of GPU kernel time", Percent(layout / all)},
		},
		Evidence: []Evidence{
			{Text: fmt.Sprintf("per steady step: %s of GPU time moving tensors between memory formats, %s in the convolutions themselves, "+
				"of %s of kernel time", fmtUs(layout), fmtUs(conv), fmtUs(all))},
			{Text: "the conversions (steady steps):", Table: tb},
			{Text: "launched from: " + where},
			{Text: "saving model: the conversions' GPU time per step; with one memory format end to end none is needed"},
		},
		Fix: "use one memory format end to end: model.to(memory_format=torch.channels_last) and the input too " +
			"(x.to(memory_format=torch.channels_last)), and drop the .contiguous()/permute around the convolutions (" + where +
			"); cuDNN's tensor-core convolutions run NHWC natively, so channels_last also removes cuDNN's own transposes",
		Confidence: High,
	}
}

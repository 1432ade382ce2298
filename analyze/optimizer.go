package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// OptimizerMinShare is the share of the steady-state step that the GPU
// must sit idle during the optimizer step for optimizer-step to report it.
const OptimizerMinShare = 0.05

// OptimizerStep finds a multi-tensor optimizer whose host time leaves the
// GPU idle.
var OptimizerStep = &Analyzer{
	Name: "optimizer-step",
	Doc: fmt.Sprintf("Measures torch.optim's step (its Optimizer.step#Class.step range) per steady-state step: the host time it takes "+
		"and how much of it the GPU spends idle. An unfused optimizer (foreach or per-parameter loop) dispatches several kernels per "+
		"parameter group and state tensor from Python, so with many parameters or small ones the host, not the GPU, sets its pace. "+
		"Reported when the GPU idles during it for at least %.0f%% of the median step after the first and the step is not already fused "+
		"(_fused_adam/_fused_adamw/_fused_sgd ops or Fused*Functor kernels). Saving model: that idle time per step, which a fused "+
		"optimizer (one kernel per group) or a captured/compiled step removes.", OptimizerMinShare*100),
	Requires: []*Analyzer{Steps, KernelCategories, Attribution, Launches, IdleGaps, Shapes, CompileRegions, Phases},
	Run:      runOptimizerStep,
}

// fusedOptimizer reports whether an optimizer op or kernel is a fused
// implementation (one kernel per parameter group).
func fusedOptimizer(name string) bool {
	return strings.HasPrefix(name, "aten::_fused_") || strings.Contains(name, "FusedAdam") || strings.Contains(name, "FusedSgd") ||
		strings.Contains(name, "fused_adam") || strings.Contains(name, "FusedOptimizer")
}

// optimizerRanges returns the Optimizer.step# ranges per step index (by
// start), and their class names.
func (ix *index) optimizerRanges() (map[int][]trace.Span, []string) {
	t := ix.t
	by := map[int][]trace.Span{}
	var classes []string
	for i := range t.Annotations {
		a := &t.Annotations[i]
		name, ok := strings.CutPrefix(a.Name, "Optimizer.step#")
		if a.GPU || !ok {
			continue
		}
		if st := t.StepOf(a.Start); st >= 0 {
			by[st] = append(by[st], a.Span)
		}
		class, _, _ := strings.Cut(name, ".")
		if !containsStr(classes, class) {
			classes = append(classes, class)
		}
	}
	return by, classes
}

func runOptimizerStep(p *Pass) ([]Finding, error) {
	t, ix, r := p.Trace, p.ix, p.Result
	if len(r.Steps) == 0 || len(ix.devices) == 0 {
		return nil, nil
	}
	ranges, classes := ix.optimizerRanges()
	if len(ranges) == 0 {
		return nil, nil
	}
	foreachOps, kernels, fused := ix.optimizerImpl()
	if fused {
		return nil, nil // fused already: nothing to gain from fused=True
	}
	first := 0
	if len(t.Steps) > 1 {
		first = 1
	}
	host, idle, fusedIdle := ix.optimizerIdle(ranges, first)
	var walls []float64
	for si := first; si < len(t.Steps); si++ {
		walls = append(walls, r.Steps[si].WallUs)
	}
	wall, medIdle, medHost, medFused := median(walls), median(idle), median(host), median(fusedIdle)
	if wall <= 0 || medIdle < OptimizerMinShare*wall {
		return nil, nil
	}
	impl := "a per-parameter loop (for-loop implementation)"
	if foreachOps > 0 {
		impl = "the foreach (multi-tensor) implementation"
	}
	class := strings.Join(classes, ", ")
	steps := float64(max(len(t.Steps)-first, 1))
	return []Finding{{
		Title: fmt.Sprintf("%s.step: %s of host time per step, GPU idle %s of it (%.0f%% of the step); use fused=True",
			ClipName(class, 20), fmtUs(medHost), fmtUs(medIdle), medIdle/wall*100),
		Subject:    "optimizer step " + class,
		Severity:   severityByShare(medIdle / wall),
		SavingUs:   medIdle,
		SavingFrom: FromGPUIdle,
		Measures: []Measure{
			{"optimizer host time per step", DurUs(medHost)},
			{"GPU idle in it per step", DurUs(medIdle)},
			{"GPU idle in its foreach ops per step", DurUs(medFused)},
			{"median step", DurUs(wall)},
		},
		Evidence: []Evidence{
			{Text: fmt.Sprintf("median step after the first: wall %s; Optimizer.step#%s ranges: %s on the host, GPU idle %s of it", fmtUs(wall), class,
				fmtUs(medHost), fmtUs(medIdle))},
			{Text: fmt.Sprintf("%s runs as %s: %.0f kernels per step launched one by one from Python", class, impl, float64(kernels)/float64(len(t.Steps)))},
			{Text: fmt.Sprintf("saving model: the GPU idle time inside the optimizer step per step (%.0f steps measured), which a captured or compiled step removes; fused=True replaces only the foreach ops, from the first to the last (GPU idle %s per step), and keeps the per-parameter Python that sets up each tensor's state before them", steps, fmtUs(medFused))},
		},
		Fix: fmt.Sprintf("construct the optimizer with fused=True (torch.optim.%s(params, ..., fused=True)): one CUDA kernel per parameter group instead of "+
			"kernels dispatched per tensor list from Python; or compile the step (torch.compile(optimizer.step)), or capture it in a CUDA graph "+
			"with capturable=True; with many small parameters, flattening them into fewer tensors also helps", firstOr(classes, "AdamW")),
		Confidence: High,
	}}, nil
}

// optimizerIdle returns, for each step from first on, the host time of
// its optimizer ranges (merged), the GPU idle in them per device, and the
// GPU idle from the first foreach op to the last in each range (the part
// fused=True replaces; the whole range for a per-parameter loop).
func (ix *index) optimizerIdle(ranges map[int][]trace.Span, first int) (host, idle, fusedIdle []float64) {
	ndev := float64(len(ix.devices))
	foreach := foreachSpans(ix.t)
	for si := first; si < len(ix.t.Steps); si++ {
		var h, busy, ext, extBusy trace.Duration
		for _, s := range mergedSpans(ranges[si]) {
			h += s.Dur()
			busy += ix.busyIn(s.Start, s.End)
			e := foreachExtent(foreach, s)
			ext += e.Dur()
			extBusy += ix.busyIn(e.Start, e.End)
		}
		host = append(host, us(h))
		idle = append(idle, max(us(h)-us(busy)/ndev, 0))
		fusedIdle = append(fusedIdle, max(us(ext)-us(extBusy)/ndev, 0))
	}
	return host, idle, fusedIdle
}

// foreachSpans returns the spans of the trace's foreach ops, by start.
func foreachSpans(t *trace.Trace) []trace.Span {
	var v []trace.Span
	for i := range t.Ops {
		if strings.HasPrefix(t.Ops[i].Name, "aten::_foreach_") {
			v = append(v, trace.Span{Start: t.Ops[i].Start, End: t.Ops[i].End})
		}
	}
	slices.SortFunc(v, func(a, b trace.Span) int { return cmp.Compare(a.Start, b.Start) })
	return v
}

// foreachExtent is the part of s from the first foreach op starting in
// it to the largest end among them (clipped to s); s itself when none
// does (a per-parameter loop).
func foreachExtent(foreach []trace.Span, s trace.Span) trace.Span {
	i, _ := slices.BinarySearchFunc(foreach, s.Start, func(a trace.Span, t trace.Time) int { return cmp.Compare(a.Start, t) })
	if i == len(foreach) || foreach[i].Start >= s.End {
		return s
	}
	out := trace.Span{Start: foreach[i].Start, End: foreach[i].Start}
	for ; i < len(foreach) && foreach[i].Start < s.End; i++ {
		out.End = max(out.End, min(foreach[i].End, s.End))
	}
	return out
}

// optimizerImpl counts the optimizer phase's foreach ops (by the GPU
// activities they launched) and kernels in steps, and reports whether it
// is fused already.
func (ix *index) optimizerImpl() (foreachOps, kernels int, fused bool) {
	t := ix.t
	for g := range t.GPU {
		if ix.phase[g] != optimizer {
			continue
		}
		if fusedOptimizer(t.GPU[g].Name) {
			return 0, 0, true
		}
		if t.GPU[g].Kind == trace.Kernel && ix.gpuStep[g] >= 0 {
			kernels++
		}
		for cur := ix.opOf(g); cur != trace.None; cur = t.Ops[cur].Parent {
			if fusedOptimizer(t.Ops[cur].Name) {
				return 0, 0, true
			}
			if strings.HasPrefix(t.Ops[cur].Name, "aten::_foreach_") {
				foreachOps++
				break
			}
		}
	}
	return foreachOps, kernels, false
}

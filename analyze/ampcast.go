package analyze

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// AMPCastMinShare is the share of the steady-state step's GPU busy time
// that weight casts must take for amp-cast to report them.
const AMPCastMinShare = 0.02

// AMPCast finds fp32 weights cast to bf16/fp16 every step under autocast.
var AMPCast = &Analyzer{
	Name: "amp-cast",
	Doc: fmt.Sprintf("Finds the forward pass casting fp32 parameters to bf16/fp16 every step (kernels under aten::_to_copy whose source is "+
		"fp32 with a parameter's shape: one that autograd accumulates a gradient for, or the weight operand of the GEMM op around the "+
		"cast), as autocast does for fp32 weights on every forward. Reported when those casts take at least %.0f%% of the steady-state "+
		"step's GPU busy time. Saving model: their GPU time per step, which keeping a low-precision copy of the weights removes.",
		AMPCastMinShare*100),
	Requires: []*Analyzer{Steps, KernelCategories, Attribution, Launches, IdleGaps, Shapes, CompileRegions, Phases, OpClasses},
	Run:      runAMPCast,
}

// lowPrecisionCast reports whether a copy kernel writes bf16 or fp16: its
// name is ATen's bf16/fp16 copy kernel or names the half type (the source
// is known to be fp32).
func lowPrecisionCast(kernel string) bool {
	for _, w := range []string{"bfloat16_copy", "float16_copy", "BFloat16", "Half"} {
		if strings.Contains(kernel, w) {
			return true
		}
	}
	return false
}

// paramShapes returns the shapes autograd accumulates gradients for (the
// trainable parameters), from torch::autograd::AccumulateGrad ops (their
// op class).
func paramShapes(t *trace.Trace, oc *OpClassFacts) map[string]bool {
	m := map[string]bool{}
	for i, c := range oc.class {
		if c&opIsAccumulateGradNode != 0 {
			if d := parseDims(t.Ops[i].InputDims); len(d) > 0 && len(d[0]) > 0 {
				m[fmt.Sprint(d[0])] = true
			}
		}
	}
	return m
}

// weightCast returns the shape a cast op converts when it is an fp32
// parameter, or "".
func weightCast(t *trace.Trace, op trace.Index, params map[string]bool) string {
	o := &t.Ops[op]
	types, dims := parseTypes(o.InputTypes), parseDims(o.InputDims)
	if len(types) == 0 || types[0] != "float" || len(dims) == 0 || len(dims[0]) == 0 {
		return ""
	}
	shape := fmt.Sprint(dims[0])
	if params[shape] {
		return shape
	}
	// No AccumulateGrad (inference): the weight operand of the GEMM op
	// the autocast wrapper runs in.
	for p := o.Parent; p != trace.None; p = t.Ops[p].Parent {
		if slices.Contains(gemmOps, t.Ops[p].Name) {
			pd := parseDims(t.Ops[p].InputDims)
			w := 1
			if t.Ops[p].Name == "aten::addmm" {
				w = 2
			}
			if len(pd) > w && fmt.Sprint(pd[w]) == shape {
				return shape
			}
			break
		}
	}
	return ""
}

// weightCasts are the forward pass's casts of fp32 parameters to a low
// precision, per step, by shape and by user line.
type weightCasts struct {
	perStep       []trace.Duration
	counts        []int
	shapes, lines map[string]int
	casts         []int
}

// weightCasts finds the low-precision cast kernels of the forward pass
// whose aten::_to_copy converts an fp32 parameter (weightCast). The
// parameters' shapes are gathered on the first cast found: most traces
// have none.
func (ix *index) weightCasts(t *trace.Trace, oc *OpClassFacts, steps int) weightCasts {
	var params map[string]bool
	c := weightCasts{perStep: make([]trace.Duration, steps), counts: make([]int, steps), shapes: map[string]int{}, lines: map[string]int{}}
	memo := map[trace.Index]string{}
	// A few kernel names launch again and again: each is searched once
	// (by its name id).
	castName := make([]int8, len(ix.names)) // 0 unknown, 1 yes, 2 no
	for g := range t.GPU {
		st := ix.gpuStep[g]
		if st < 0 || t.GPU[g].Kind != trace.Kernel || ix.phase[g] != forward {
			continue
		}
		id := ix.nameOf.at(g)
		if castName[id] == 0 {
			castName[id] = 2
			if lowPrecisionCast(t.GPU[g].Name) {
				castName[id] = 1
			}
		}
		if castName[id] != 1 {
			continue
		}
		op := ix.opOf(g)
		if op != trace.None {
			op = oc.enclosing(op, opIsToCopy)
		}
		if op == trace.None {
			continue
		}
		shape, ok := memo[op]
		if !ok {
			if params == nil {
				params = paramShapes(t, oc)
			}
			shape = weightCast(t, op, params)
			memo[op] = shape
		}
		if shape == "" {
			continue
		}
		c.perStep[st] += t.GPU[g].Dur()
		c.casts = append(c.casts, g)
		c.counts[st]++
		c.shapes[shape]++
		if l := ix.userLine(g); l != "" {
			c.lines[l]++
		}
	}
	return c
}

func runAMPCast(p *Pass) ([]Finding, error) {
	t, ix, r := p.Trace, p.ix, p.Result
	if len(r.Steps) == 0 {
		return nil, nil
	}
	oc, err := p.opClasses()
	if err != nil {
		return nil, err
	}
	c := ix.weightCasts(t, oc, len(r.Steps))
	perStep, counts, shapes, lines, casts := c.perStep, c.counts, c.shapes, c.lines, c.casts
	medCast, medN, medBusy := steadyMedians(r, perStep, counts)
	if medN == 0 || medBusy <= 0 || medCast < AMPCastMinShare*medBusy {
		return nil, nil
	}
	tb := NewTable(Col("fp32 parameter shape", KindName), Col("casts in the trace", KindCount))
	for _, k := range topKeys(shapes, 6) {
		tb.Add(NameCell(k), Count(float64(shapes[k])))
	}
	where := strings.Join(topKeys(lines, MaxAttribution), "; ")
	if where == "" {
		where = "the autocast region"
	}
	return []Finding{{
		Title: fmt.Sprintf("%.0f fp32→low-precision weight casts per step under autocast take %s of GPU time (%.0f%% of GPU busy)",
			medN, fmtUs(medCast), medCast/medBusy*100),
		Subject:    "autocast weight casts",
		Severity:   severityByShare(p.shareOfStep(medCast)),
		SavingUs:   medCast,
		SavingFrom: FromKernelTime,
		Measures: []Measure{
			{"casts per step", Count(medN)},
			{"cast kernel time per step", DurUs(medCast)},
			{"GPU busy per step", DurUs(medBusy)},
		},
		Evidence: []Evidence{
			{Text: fmt.Sprintf("median step after the first: %.0f cast kernels (aten::_to_copy of fp32 parameters) in the forward pass, %s of GPU time, GPU busy %s",
				medN, fmtUs(medCast), fmtUs(medBusy))},
			{Text: "parameters cast (shapes autograd accumulates gradients for, or the GEMM's weight operand):", Table: tb},
			{Text: "saving model: the casts' GPU time per step (plus one launch each), gone when the weights are already in the compute dtype"},
		},
		Fix: fmt.Sprintf("stop re-casting the fp32 weights every forward (%s): keep a bf16/fp16 copy of the parameters (model.to(torch.bfloat16) with "+
			"fp32 master weights in the optimizer, or FSDP MixedPrecision(param_dtype=torch.bfloat16)), or torch.compile the model so the casts "+
			"fuse into their consumers; autocast casts each fp32 weight again on every forward", where),
		Confidence: Medium,
		activities: casts,
	}}, nil
}

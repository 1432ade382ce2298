package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// Thresholds of cold-start's per-shape test.
const (
	// ShapeCostMinRatio is how many times slower than a repeat call of
	// the same shapes the first call of each new shape must be for an
	// op's first-call cost to count as paid per shape.
	ShapeCostMinRatio = 4.0
	// ShapeCostMinUs is the least difference (µs) between a new shape's
	// first call and a repeat call worth calling a per-shape cost.
	ShapeCostMinUs = 500.0
	// coldStartMaxOps bounds the ops listed.
	coldStartMaxOps = 5
)

// opExcess is one op's share of a first step's excess: its self time
// (its own time less the ops it called) in the first step beyond the
// steady median, and whether that cost returns with every new shape.
type opExcess struct {
	name        string
	first, rest float64
	// perShape is true when later first calls of new input shapes pay
	// the cost again; newShape and repeat are their median self times
	// and shapes how many distinct shapes the op ran.
	perShape         bool
	newShape, repeat float64
	shapes           int
}

// opSelf returns each op's self time: its duration less its direct
// children's.
func opSelf(t *trace.Trace) []trace.Duration {
	self := make([]trace.Duration, len(t.Ops))
	for i := range t.Ops {
		self[i] += t.Ops[i].Dur()
		if p := t.Ops[i].Parent; p != trace.None {
			self[p] -= t.Ops[i].Dur()
		}
	}
	for i := range self {
		self[i] = max(self[i], 0)
	}
	return self
}

// firstStepOps ranks the ops by the self time the first step spends in
// them beyond the steady steps' median, and tests each of the top ones
// for a per-shape cost.
func firstStepOps(t *trace.Trace) []opExcess {
	if len(t.Steps) < 2 {
		return nil
	}
	self := opSelf(t)
	per := make([]map[string]float64, len(t.Steps))
	for i := range per {
		per[i] = map[string]float64{}
	}
	for i := range t.Ops {
		if st := t.StepOf(t.Ops[i].Start); st >= 0 {
			per[st][t.Ops[i].Name] += us(self[i])
		}
	}
	var rows []opExcess
	for name, d := range per[0] {
		rest := make([]float64, 0, len(per)-1)
		for _, m := range per[1:] {
			rest = append(rest, m[name])
		}
		if x := (opExcess{name: name, first: d, rest: median(rest)}); x.first > x.rest {
			rows = append(rows, x)
		}
	}
	slices.SortFunc(rows, func(a, b opExcess) int {
		if c := cmp.Compare(b.first-b.rest, a.first-a.rest); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	rows = rows[:min(len(rows), coldStartMaxOps)]
	for i := range rows {
		shapeCost(t, self, &rows[i])
	}
	return rows
}

// shapeCost tells whether op x's first-call cost is paid per shape: the
// first call of each input shape after the op's very first call, against
// the calls that repeat a shape already seen, by the per-op times given
// (self or whole).
func shapeCost(t *trace.Trace, self []trace.Duration, x *opExcess) {
	seen := map[string]bool{}
	var newShape, repeat []float64
	first := true
	for i := range t.Ops {
		o := &t.Ops[i]
		if o.Name != x.name {
			continue
		}
		switch {
		case first:
			first = false
		case !seen[o.InputDims]:
			newShape = append(newShape, us(self[i]))
		default:
			repeat = append(repeat, us(self[i]))
		}
		seen[o.InputDims] = true
	}
	x.shapes = len(seen)
	if len(newShape) == 0 || len(repeat) == 0 {
		return
	}
	x.newShape, x.repeat = median(newShape), median(repeat)
	x.perShape = x.newShape >= ShapeCostMinRatio*x.repeat && x.newShape-x.repeat >= ShapeCostMinUs
}

// opExcessTable lists the ops behind the first step's excess.
func opExcessTable(rows []opExcess) *Table {
	tb := NewTable(Col("op (self time)", KindName), Col("first step", KindDuration), Col("steady median", KindDuration),
		Col("extra", KindDuration), Col("paid", KindName))
	for _, x := range rows {
		paid := "once per process"
		if x.perShape {
			paid = fmt.Sprintf("per new shape (%d shapes; a new shape's first call %s, a repeat %s)", x.shapes, fmtUs(x.newShape), fmtUs(x.repeat))
		}
		tb.Add(NameCell(x.name), DurUs(x.first), DurUs(x.rest), DurUs(x.first-x.rest), NameCell(paid))
	}
	return tb
}

// shapeFix is the fix for an op that pays its cost per new input shape.
func shapeFix(op string) string {
	n := strings.ToLower(op)
	switch {
	case strings.Contains(n, "cudnn_attention") || strings.Contains(n, "scaled_dot_product") || strings.Contains(n, "attention"):
		return fmt.Sprintf("%s pays again for every new input shape: cuDNN's SDPA backend builds an execution plan per sequence length. "+
			"Pad or bucket sequence lengths to a few sizes and warm each up, or run variable lengths on the flash or memory-efficient backend "+
			"(torch.nn.attention.sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]))", op)
	case strings.Contains(n, "conv") || strings.Contains(n, "cudnn"):
		return fmt.Sprintf("%s pays again for every new input shape (cuDNN searches algorithms per shape when torch.backends.cudnn.benchmark "+
			"is on): bucket input shapes to a few sizes and warm each up, or turn cudnn.benchmark off for shapes that keep changing", op)
	case compiledRegion(op) || strings.Contains(n, "compile"):
		return fmt.Sprintf("%s recompiles for every new input shape: torch.compile(dynamic=True), or torch._dynamo.mark_dynamic(x, dim) on the "+
			"dimension that varies, or bucket shapes to a few sizes", op)
	}
	return fmt.Sprintf("%s pays again for every new input shape (library plans, kernel selection or autotuning per shape): bucket or pad "+
		"inputs to a few shapes and warm each up before timing", op)
}

// savingModel states cold-start's saving model: paid once per process,
// or, for the per-shape part, once per new shape.
func savingModel(shaped *opExcess) string {
	if shaped == nil {
		return "saving model: the first step's excess over the steady median, paid once per process: no steady-state step gets shorter"
	}
	return fmt.Sprintf("saving model: the first step's excess over the steady median; %s of it returns with every new input shape of %s "+
		"(steps that meet a new shape pay it again), the rest is paid once per process", fmtUs(shaped.first-shaped.rest), shaped.name)
}

// newShapeCause returns the op among names whose time in idle gaps is a
// per-shape cost (its first call of each new shape far slower than its
// repeats), or "".
func newShapeCause(t *trace.Trace, names []string) string {
	var whole []trace.Duration
	for _, n := range names {
		if !slices.ContainsFunc(t.Ops, func(o trace.Op) bool { return o.Name == n }) {
			continue // not an op (a Python function, a range)
		}
		if whole == nil {
			// The whole op, its callees included: the gap names the
			// top-level op, the cost sits in the op it calls.
			whole = make([]trace.Duration, len(t.Ops))
			for i := range t.Ops {
				whole[i] = t.Ops[i].Dur()
			}
		}
		x := opExcess{name: n}
		shapeCost(t, whole, &x)
		if x.perShape {
			return n
		}
	}
	return ""
}

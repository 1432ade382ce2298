package analyze

import (
	"fmt"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// GEMMEpilogueMinShare is the share of the steady-state step's GPU busy
// time that the separate bias/activation kernels after GEMMs must take
// for gemm-epilogue to report them.
const GEMMEpilogueMinShare = 0.01

// GEMMEpilogueMinUs is the least epilogue kernel time per step (µs)
// worth a finding: below it the fusion saves less than a launch or two.
const GEMMEpilogueMinUs = 10.0

// GEMMEpilogue finds bias adds and activations run as separate kernels
// right after a GEMM.
var GEMMEpilogue = &Analyzer{
	Name: "gemm-epilogue",
	Doc: fmt.Sprintf("Finds forward GEMM kernels whose next kernel on the same stream is launched by a bias add or an activation "+
		"(aten::add/add_ of a broadcast bias, aten::gelu, aten::relu, aten::silu, aten::clamp_min, aten::sigmoid, aten::tanh; and the activation that "+
		"directly follows such a bias add): work a GEMM epilogue does for free while the tile is still in registers, here written to "+
		"memory and read back by another kernel. Reported when those kernels take at least %.0f%% of the steady-state step's GPU busy "+
		"time and %.0f µs per step. Saving model: their GPU time per step.", GEMMEpilogueMinShare*100, GEMMEpilogueMinUs),
	Requires: []*Analyzer{Steps, KernelCategories, Attribution, Launches, IdleGaps, Shapes, CompileRegions, Phases, OpClasses},
	Run:      runGEMMEpilogue,
}

// epilogueOp reports whether op is what a GEMM epilogue can apply: an
// activation, or an add of a broadcast operand (a bias: fewer elements
// than the GEMM output it is added to; adding two full matrices is not
// an epilogue). bias remembers the answer for an add's input dims (the
// same few shapes every layer).
func epilogueOp(o *trace.Op, bias map[string]bool) bool {
	switch strings.TrimSuffix(strings.TrimPrefix(o.Name, "aten::"), "_") {
	case "gelu", "relu", "silu", "clamp_min", "sigmoid", "tanh", "leaky_relu":
		return true
	case "add":
		v, ok := bias[o.InputDims]
		if !ok {
			d := parseDims(o.InputDims)
			v = len(d) >= 2 && len(d[0]) > 0 && len(d[1]) > 0 && numel(d[1]) < numel(d[0])
			bias[o.InputDims] = v
		}
		return v
	}
	return false
}

// compiledWith reports whether GPU activity g runs code a compiler already
// scheduled or runs for the compiler: launched inside a torch.compile
// region (Torch-Compiled Region, CompiledFunction and its backward), by
// Inductor's autotuner, or replayed from a CUDA graph. Its kernels are
// what Inductor chose not to fuse (library calls, reductions it splits on
// purpose); telling the user to fuse them with torch.compile would be
// wrong. The walk up the op tree reads the op classes' dense parents and
// compiled marks (TestCompiledWithMatchesCompiled holds it to the walk
// over the ops it replaced).
func (ix *index) compiledWith(oc *OpClassFacts, g int) bool {
	if ix.autotune != nil && ix.autotune[g] || graphLaunched(ix.t, g) {
		return true
	}
	op := ix.opOf(g)
	return op != trace.None && oc.enclosing(op, opIsCompiled) != trace.None
}

// epilogueAfter returns the epilogue ops run as separate kernels right
// after GEMM kernel g on its stream (a bias add, an activation, or a bias
// add then an activation) and those kernels.
func (ix *index) epilogueAfter(oc *OpClassFacts, bias map[string]bool, g int) (ops []string, kernels []int) {
	t := ix.t
	a := &t.GPU[g]
	for n := g + 1; n < len(t.GPU) && len(ops) < 2; n++ {
		b := &t.GPU[n]
		if b.Device != a.Device || b.Stream != a.Stream || b.Kind != trace.Kernel || ix.opOf(n) == trace.None || ix.compiledWith(oc, n) {
			break
		}
		o := &t.Ops[ix.opOf(n)]
		if !epilogueOp(o, bias) || len(ops) == 1 && !strings.HasPrefix(ops[0], "aten::add") {
			// Only bias add → activation chains continue.
			break
		}
		ops, kernels = append(ops, o.Name), append(kernels, n)
	}
	return ops, kernels
}

func runGEMMEpilogue(p *Pass) ([]Finding, error) {
	t, ix, r := p.Trace, p.ix, p.Result
	if len(r.Steps) == 0 {
		return nil, nil
	}
	oc, err := p.opClasses()
	if err != nil {
		return nil, err
	}
	gemm := ix.categoryID(CategoryGEMM)
	bias := map[string]bool{}
	perStep := make([]trace.Duration, len(r.Steps))
	pairs := make([]int, len(r.Steps))
	chains := map[string]int{}
	lines := map[string]int{}
	var epilogues []int
	// GPU is sorted by device, stream, start: the next activity on the
	// same stream is the next index.
	for g := 0; g+1 < len(t.GPU); g++ {
		a := &t.GPU[g]
		st := ix.gpuStep[g]
		if st < 0 || a.Kind != trace.Kernel || int(ix.cat[g]) != gemm || ix.phase[g] != forward || ix.compiledWith(oc, g) {
			continue
		}
		ops, kernels := ix.epilogueAfter(oc, bias, g)
		for _, n := range kernels {
			perStep[st] += t.GPU[n].Dur()
			epilogues = append(epilogues, n)
			if l := ix.userLine(n); l != "" {
				lines[l]++
			}
		}
		if len(ops) > 0 {
			pairs[st]++
			chains[ShortKernelName(a.Name)+" → "+strings.Join(ops, " → ")]++
		}
	}
	medEp, medN, medBusy := steadyMedians(r, perStep, pairs)
	if medN == 0 || medBusy <= 0 || medEp < GEMMEpilogueMinShare*medBusy || medEp < GEMMEpilogueMinUs {
		return nil, nil
	}
	tb := NewTable(Col("GEMM → separate epilogue kernels", KindName), Col("times in the trace", KindCount))
	for _, k := range topKeys(chains, 6) {
		tb.Add(NameCell(k), Count(float64(chains[k])))
	}
	where := strings.Join(topKeys(lines, MaxAttribution), "; ")
	if where == "" {
		where = "the forward pass"
	}
	return []Finding{{
		Title: fmt.Sprintf("%.0f GEMMs per step are followed by separate bias/activation kernels (%s of GPU time, %.0f%% of GPU busy)",
			medN, fmtUs(medEp), medEp/medBusy*100),
		Subject:    "GEMM epilogues",
		Severity:   severityByShare(p.shareOfStep(medEp)),
		SavingUs:   medEp,
		SavingFrom: FromKernelTime,
		Measures: []Measure{
			{"GEMMs with a separate epilogue per step", Count(medN)},
			{"epilogue kernel time per step", DurUs(medEp)},
			{"GPU busy per step", DurUs(medBusy)},
		},
		Evidence: []Evidence{
			{Text: fmt.Sprintf("median step after the first: %.0f GEMMs whose output the next kernel re-reads to add a bias or apply an activation, %s of GPU time in those kernels",
				medN, fmtUs(medEp))},
			{Text: "GEMM kernels and the epilogue ops launched right after them:", Table: tb},
			{Text: "saving model: the separate epilogue kernels' GPU time per step (plus their launches), done inside the GEMM when fused"},
		},
		Fix: fmt.Sprintf("fuse the bias and activation into the GEMM (%s): F.linear(x, w, b) / torch.addmm(b, x, w) apply the bias in cuBLASLt's epilogue, "+
			"torch._addmm_activation(b, x, w, use_gelu=True) fuses bias+GELU/ReLU, or torch.compile the block so Inductor emits the GEMM with "+
			"its epilogue", where),
		Confidence: Medium,
		activities: epilogues,
	}}, nil
}

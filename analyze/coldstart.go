package analyze

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// Thresholds of cold-start.
const (
	// ColdStartMinRatio is how many times slower than the steady-state
	// step the first step must be.
	ColdStartMinRatio = 2.0
	// ColdStartMinExcessUs is the least time (µs) the first step must
	// take beyond the steady state to be worth a finding.
	ColdStartMinExcessUs = 500.0
	// ColdStartMaxCompileShare is the share of the first step that
	// torch.compile work may take before the cold start is
	// compile-overhead's business.
	ColdStartMaxCompileShare = 0.1
	// coldStartMaxRows bounds the API calls listed.
	coldStartMaxRows = 5
)

// ColdStart finds a first call or step far slower than the steady state,
// without torch.compile.
var ColdStart = &Analyzer{
	Name: "cold-start",
	Doc: fmt.Sprintf("Compares the first step (or first call, when steps come from repeated ranges or function calls) with the median "+
		"of the others: reported when it is at least %.0f× slower and %.0f µs longer, and torch.compile work takes under %.0f%% of it "+
		"(otherwise compile-overhead reports it). The evidence splits the excess into CUDA/driver API calls that the steady state does "+
		"not make (context creation, lazy module loading, cudaMalloc as the caching allocator grows, cuBLAS/cuDNN handle and "+
		"workspace set-up), first-call GPU time and the rest (Python imports, lazy initialisation), and ranks the ops whose self time the "+
		"first step spends beyond the steady state; an op whose first call of each new input shape is again much slower than its repeat "+
		"calls (cuDNN/cuBLAS plans, autotuning, recompiles) is a per-shape cost, with the fix for it rather than warm-up. Saving model: the excess over the "+
		"steady step, spread over the steps traced; warming up before timing removes it from measurements.",
		ColdStartMinRatio, ColdStartMinExcessUs, ColdStartMaxCompileShare*100),
	Requires: []*Analyzer{Steps, KernelCategories, Attribution, Launches, IdleGaps, Shapes, CompileRegions, Phases},
	Run:      runColdStart,
}

// apiKind groups the CUDA API calls a first call makes once.
func apiKind(name string) string {
	n := strings.ToLower(name)
	switch {
	case strings.Contains(n, "malloc") || strings.Contains(n, "memreserve") || strings.Contains(n, "memcreate") ||
		strings.Contains(n, "memmap") || strings.Contains(n, "hostregister") || strings.Contains(n, "hostalloc"):
		return "allocator growth (" + name + ")"
	case strings.Contains(n, "module") || strings.Contains(n, "library") || strings.Contains(n, "getfunc") ||
		strings.Contains(n, "funcgetattributes") || strings.Contains(n, "funcsetattribute") || strings.Contains(n, "registerfatbinary"):
		return "kernel loading (" + name + ")"
	case strings.Contains(n, "init") || strings.Contains(n, "ctx") || strings.Contains(n, "primarycontext") || strings.Contains(n, "setdevice") ||
		strings.Contains(n, "getdevice") || strings.Contains(n, "deviceget") || strings.Contains(n, "streamcreate") || strings.Contains(n, "eventcreate"):
		return "context and stream set-up (" + name + ")"
	}
	return name
}

func runColdStart(p *Pass) ([]Finding, error) {
	t, r := p.Trace, p.Result
	if len(r.Steps) < 2 || r.Summary.StepsSynthetic || !r.Summary.FirstStepIsFirstExecution {
		// ProfilerStep#N with N > 0 first: earlier iterations ran
		// unprofiled, so the first profiled step is not the first
		// execution and its excess is no cold start.
		return nil, nil
	}
	first, steady := r.Steps[0], r.Steps[1:]
	wall := medianOf(steady, func(s *Step) float64 { return s.WallUs })
	// A rank of a run that waited longer for a late peer in its first
	// step than in the others: that wait is the peer's lateness, not this
	// rank's warm-up (the ledger's peer_wait line; 0 for a lone trace).
	peer := func(s *Step) float64 { return LedgerUs(s.Ledger, LinePeerWait) }
	own := first.WallUs - max(peer(&first)-medianOf(steady, peer), 0)
	excess := own - wall
	if wall <= 0 || own < ColdStartMinRatio*wall || excess < ColdStartMinExcessUs {
		return nil, nil
	}
	if p.compileInFirstStep() >= ColdStartMaxCompileShare*first.WallUs {
		return nil, nil
	}
	tb, apiExcess := p.apiExcessTable()
	gpuExcess := first.GPUBusyUs - medianOf(steady, func(s *Step) float64 { return s.GPUBusyUs })
	unit, eager, tag, fix := coldStartWords(r)
	apiExcess = min(apiExcess, excess)
	ops := firstStepOps(t)
	var shaped *opExcess
	if len(ops) > 0 && ops[0].perShape {
		// The largest share of the excess returns with each new shape:
		// warming up once does not remove it.
		shaped = &ops[0]
		eager = fmt.Sprintf("%s of the excess is %s, which pays it again for each new input shape (%d shapes in this trace): not a one-time cost",
			fmtUs(shaped.first-shaped.rest), shaped.name, shaped.shapes)
		fix = shapeFix(shaped.name) + "; the rest is warm-up paid once per process: run one untimed call first"
	}
	ev := []Evidence{
		{Text: fmt.Sprintf("first %s: %s; median of the %d others: %s (%.1f× slower, %s more)", unit, fmtUs(first.WallUs), len(steady), fmtUs(wall),
			first.WallUs/wall, fmtUs(excess))},
		{Text: fmt.Sprintf("of the extra %s: %s in CUDA API calls the steady state does not repeat, %s more GPU busy time, %s other host work "+
			"(Python imports, lazy initialisation, first-call dispatch)", fmtUs(excess), fmtUs(apiExcess), fmtUs(max(gpuExcess, 0)),
			fmtUs(max(excess-apiExcess-max(gpuExcess, 0), 0)))},
	}
	if len(tb.Rows) > 0 {
		ev = append(ev, Evidence{Text: "CUDA API time in the first step beyond the steady state:", Table: tb})
	}
	if len(ops) > 0 {
		ev = append(ev, Evidence{Text: "host time by op (self time: the op less the ops it called) in the first step beyond the steady state:", Table: opExcessTable(ops)})
	}
	ev = append(ev, Evidence{Text: eager},
		Evidence{Text: savingModel(shaped)})
	title := fmt.Sprintf("cold start: the first %s takes %s, %.0f× the steady %s%s", ClipName(unit, 45), fmtUs(first.WallUs),
		first.WallUs/wall, fmtUs(wall), tag)
	if shaped != nil {
		title = fmt.Sprintf("first %s %s, %.0f× the steady %s: %s pays per new shape", ClipName(unit, 30), fmtUs(first.WallUs),
			first.WallUs/wall, fmtUs(wall), ClipName(shaped.name, 40))
	}
	return []Finding{{
		Title:      title,
		Subject:    "cold start",
		Severity:   Medium,
		SavingUs:   excess,
		SavingFrom: FromOneOff,
		Measures: []Measure{
			{"first step", DurUs(first.WallUs)},
			{"steady-state step", DurUs(wall)},
			{"excess", DurUs(excess)},
			{"excess in CUDA API calls", DurUs(apiExcess)},
		},
		Evidence:   ev,
		Fix:        fix,
		Confidence: High,
	}}, nil
}

// compileInFirstStep returns the time (µs) torch.compile's work takes
// inside the first step.
func (p *Pass) compileInFirstStep() float64 {
	st0 := p.Trace.Steps[0].Span
	var inCompile []trace.Span
	for _, s := range p.compileSpans() {
		lo, hi := max(s.Start, st0.Start), min(s.End, st0.End)
		if hi > lo {
			inCompile = append(inCompile, trace.Span{Start: lo, End: hi})
		}
	}
	return us(mergeSpans(inCompile))
}

// apiExcessTable compares the CUDA API time per kind (apiKind) of the
// first step with its median over the others: a table of the kinds the
// first step spends more in, largest first, and that excess in all (µs).
func (p *Pass) apiExcessTable() (*Table, float64) {
	t := p.Trace
	perStep := make([]map[string]trace.Duration, len(t.Steps))
	for i := range perStep {
		perStep[i] = map[string]trace.Duration{}
	}
	for i := range t.APICalls {
		if s := p.ix.apiStep[i]; s >= 0 {
			c := &t.APICalls[i]
			perStep[s][apiKind(c.Name)] += c.Dur()
		}
	}
	type row struct {
		kind        string
		first, rest float64
	}
	var rows []row
	var apiExcess float64
	// In the kinds' order, not the map's: the excess is a float sum,
	// whose last digit moved with the order from run to run.
	for _, kind := range slices.Sorted(maps.Keys(perStep[0])) {
		d := perStep[0][kind]
		rest := make([]float64, 0, len(perStep)-1)
		for _, m := range perStep[1:] {
			rest = append(rest, us(m[kind]))
		}
		x := row{kind, us(d), median(rest)}
		if x.first-x.rest > 0 {
			apiExcess += x.first - x.rest
			rows = append(rows, x)
		}
	}
	slices.SortFunc(rows, func(a, b row) int {
		if c := cmp.Compare(b.first-b.rest, a.first-a.rest); c != 0 {
			return c
		}
		return cmp.Compare(a.kind, b.kind)
	})
	tb := NewTable(Col("CUDA API", KindName), Col("first step", KindDuration), Col("steady median", KindDuration), Col("extra", KindDuration))
	for _, x := range rows[:min(len(rows), coldStartMaxRows)] {
		tb.Add(NameCell(x.kind), DurUs(x.first), DurUs(x.rest), DurUs(x.first-x.rest))
	}
	return tb, apiExcess
}

// coldStartWords returns what a cold-start finding calls a step (a step,
// or a call of the repeated range or function), what the excess is and
// its fix, in the framework's terms; tag ends the title.
func coldStartWords(r *Result) (unit, eager, tag, fix string) {
	unit = "step"
	if src := r.Summary.StepSource; src == StepSourceRange || src == StepSourceCall || src == StepSourceJit {
		unit = "call of " + r.Summary.StepLabel
	}
	jax := r.Summary.Framework == "JAX"
	eager, tag = "no torch.compile work in the first step: this is eager warm-up, paid once per process", " (no torch.compile)"
	fix = "warm up before timing: run one untimed call (or a few iterations) first and leave it out of measurements and profiles " +
		"(torch.profiler's schedule(wait=1, warmup=1, ...)); the first call pays CUDA context creation, cuBLAS/cuDNN handle and " +
		"workspace set-up, lazy kernel loading (CUDA_MODULE_LOADING=EAGER moves it to start-up) and caching-allocator growth " +
		"(reuse buffers, or allocate the largest tensors first)"
	if jax {
		eager, tag = "the first call of an already compiled function: executable loading and first-dispatch set-up, paid once per process", ""
		fix = "warm up before timing: call each jitted function once with the real shapes (and jax.block_until_ready the result) before " +
			"timing or starting jax.profiler; the first call loads the executable, allocates its buffers and sets up dispatch " +
			"(and compiles, when the persistent compilation cache is cold: jax.config.update(\"jax_compilation_cache_dir\", ...) keeps it)"
	}
	return unit, eager, tag, fix
}

package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// stepCompiles is torch.compile's work per step: how many compilations
// began in each step and the compile time inside it.
type stepCompiles struct {
	compiles []int
	time     []trace.Duration
	// dynamo is the time of the _compile.compile_inner ranges starting
	// in each step (Dynamo and Inductor compiling, without the
	// autotuning at the new graph's first call).
	dynamo []trace.Duration
	// dims are the input shapes of the compiled region's calls, in call
	// order, consecutive repeats dropped.
	dims []string
}

// compilesPerStep counts, per step, the Dynamo compilations
// (_compile.compile_inner ranges, else distinct compile ids) that start in
// it and the union of torch.compile's spans inside it.
func compilesPerStep(t *trace.Trace, spans []trace.Span) stepCompiles {
	n := len(t.Steps)
	sc := stepCompiles{compiles: make([]int, n), time: make([]trace.Duration, n), dynamo: make([]trace.Duration, n)}
	count := func(s *trace.Span) bool {
		if !strings.HasPrefix(s.Name, "_compile.compile_inner") {
			return false
		}
		if st := t.StepOf(s.Start); st >= 0 {
			sc.compiles[st]++
			sc.dynamo[st] += s.Dur()
		}
		return true
	}
	found := false
	for i := range t.Ops {
		found = count(&t.Ops[i].Span) || found
	}
	for i := range t.Annotations {
		found = count(&t.Annotations[i].Span) || found
	}
	if !found {
		seen := map[string]bool{}
		for i := range t.Annotations {
			a := &t.Annotations[i]
			_, id, ok := strings.Cut(a.Name, "compile_id=")
			if st := t.StepOf(a.Start); ok && st >= 0 && !seen[id] {
				seen[id] = true
				sc.compiles[st]++
			}
		}
	}
	for i, st := range t.Steps {
		var in []trace.Span
		for _, s := range spans {
			s.Start, s.End = max(s.Start, st.Start), min(s.End, st.End)
			if s.End > s.Start {
				in = append(in, s)
			}
		}
		sc.time[i] = mergeSpans(in)
	}
	sc.dims = compiledRegionDims(t)
	return sc
}

// compiledRegionDims returns, per call of a compiled region (the ops
// "Torch-Compiled Region: F/N"), the input dims of the first op inside it
// that records them (CompiledFunction, else the graph's first op), in
// call order with consecutive repeats dropped.
func compiledRegionDims(t *trace.Trace) []string {
	first := map[trace.Index]trace.Index{} // region → its first op with dims
	for j := range t.Ops {
		o := &t.Ops[j]
		if o.InputDims == "" || o.InputDims == "[]" || compileEvent(o.Name) {
			continue
		}
		for r := o.Parent; r != trace.None; r = t.Ops[r].Parent {
			if strings.HasPrefix(t.Ops[r].Name, "Torch-Compiled Region") {
				if f, ok := first[r]; !ok || o.Start < t.Ops[f].Start {
					first[r] = trace.Index(j)
				}
				break
			}
		}
	}
	regions := make([]trace.Index, 0, len(first))
	for r := range first {
		regions = append(regions, r)
	}
	slices.SortFunc(regions, func(a, b trace.Index) int { return cmp.Compare(t.Ops[a].Start, t.Ops[b].Start) })
	var out []string
	for _, r := range regions {
		if d := t.Ops[first[r]].InputDims; len(out) == 0 || out[len(out)-1] != d {
			out = append(out, d)
		}
	}
	return out
}

// everyStep reports whether every steady step (all but the first, at
// least two) compiles.
func (sc stepCompiles) everyStep() bool {
	if len(sc.compiles) < 3 {
		return false
	}
	return !slices.Contains(sc.compiles[1:], 0)
}

// recompileFinding is compile-overhead's finding when torch.compile
// recompiles in every steady step: a per-step cost (the compile time in
// each step), with the cause the trace shows and the fix.
func recompileFinding(p *Pass, sc stepCompiles, ids []string) Finding {
	steady := len(sc.compiles) - 1
	n := make([]float64, 0, steady)
	tm := make([]float64, 0, steady)
	dy := make([]float64, 0, steady)
	for i := 1; i < len(sc.compiles); i++ {
		n = append(n, float64(sc.compiles[i]))
		tm = append(tm, us(sc.time[i]))
		dy = append(dy, us(sc.dynamo[i]))
	}
	perStep, timeUs, dynamoUs := median(n), median(tm), median(dy)
	step := p.Result.StepStats.SteadyWallUs
	share := 0.0
	if step > 0 {
		share = timeUs / step
	}
	onShape := ""
	cause := "the trace does not record the compiled region's input shapes (record_shapes=True shows them)"
	if len(sc.dims) > 1 {
		shown := sc.dims[:min(len(sc.dims), 4)]
		onShape = " on a new input shape"
		cause = fmt.Sprintf("the input shapes change from call to call (%d distinct in a row: %s%s): with dynamic=False each new shape is a new graph",
			len(sc.dims), strings.Join(shown, " → "), map[bool]string{true: " → …", false: ""}[len(sc.dims) > len(shown)])
	}
	ev := []Evidence{
		{Text: fmt.Sprintf("%.0f compilation(s) start in each of the %d steady steps (%s in Dynamo and Inductor, _compile.compile_inner); "+
			"with the autotuning at each new graph's first call torch.compile takes %s of the %s step (%.0f%%, medians)",
			perStep, steady, fmtUs(dynamoUs), fmtUs(timeUs), fmtUs(step), share*100)},
		{Text: "cause: " + cause},
	}
	if len(ids) > 0 {
		ev = append(ev, Evidence{Text: fmt.Sprintf("Dynamo compile ids %s: one frame compiled again and again", strings.Join(ids[:min(len(ids), 8)], ", "))})
	}
	ev = append(ev, Evidence{Text: "the autotuner's and compiler's own kernels, copies and syncs during compilation are counted as compile work (ledger line 'compile & autotune'), not as the step's copies or syncs"}, Evidence{Text: "saving model: the compile time in each steady step (the 'compile & autotune' line of the step's ledger), which a graph that accepts every shape compiles once"})
	return Finding{
		Title:       fmt.Sprintf("torch.compile recompiles every step%s: %s of each %s step (%.0f%%)", onShape, fmtUs(timeUs), fmtUs(step), share*100),
		Subject:     "torch.compile recompiles",
		Severity:    High,
		SavingUs:    timeUs,
		SavingFrom:  FromHostWaits,
		LedgerLines: []string{LineCompile},
		Measures: []Measure{
			{"compiles per step", Count(perStep)},
			{"compile time per step", DurUs(timeUs)},
			{"Dynamo compile time per step", DurUs(dynamoUs)},
			{"distinct input shapes", Count(float64(len(sc.dims)))},
		},
		Evidence: ev,
		Fix: "compile once for every shape: torch.compile(fn, dynamic=True), or mark the varying dimension with " +
			"torch._dynamo.mark_dynamic(x, dim) before the call; or pad inputs to a few fixed sizes (buckets) so each compiles once " +
			"and is reused; check with TORCH_LOGS=recompiles which guard fails",
		Confidence: High,
	}
}

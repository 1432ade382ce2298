package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// CompileMinShare is the share of the traced wall time that torch.compile
// work must take for compile-overhead to report it.
const CompileMinShare = 0.05

// CompileOverhead measures torch.compile cold starts and recompilations.
var CompileOverhead = &Analyzer{
	Name: "compile-overhead",
	Doc: fmt.Sprintf("Finds torch.compile work in the trace: Dynamo and Inductor ranges (*(dynamo_timed), backend_compile, "+
		"_compile.compile_inner, GraphLowering, async_compile, build_guards, AOTAutogradCache) merged per thread, the compile ids "+
		"(compile_id=F/N: N > 0 is a recompilation of frame F), CUDA-graph recording (stream capture, cudaGraphInstantiate) vs "+
		"replay (cudaGraphLaunch), and cold vs warm time of record_function ranges repeated under one name (trailing digits ignored). "+
		"Reported when compilation takes at least %.0f%% of the traced time. Saving model: the compile time per step, which a warm "+
		"start (persistent caches, warm-up before the measured/served work) does not pay.", CompileMinShare*100),
	Requires: []*Analyzer{CompileRegions},
	Run:      runCompileOverhead,
}

// compileIDs returns the distinct "compile_id=F/N" values in annotation
// names and how many are recompilations (N > 0).
func compileIDs(t *trace.Trace) (ids []string, recompiles int) {
	seen := map[string]bool{}
	for i := range t.Annotations {
		name := t.Annotations[i].Name
		_, id, ok := strings.Cut(name, "compile_id=")
		if !ok {
			continue
		}
		if j := strings.IndexAny(id, ", "); j >= 0 {
			id = id[:j]
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		ids = append(ids, id)
		if _, n, ok := strings.Cut(id, "/"); ok {
			if v, err := strconv.Atoi(n); err == nil && v > 0 {
				recompiles++
			}
		}
	}
	return ids, recompiles
}

func runCompileOverhead(p *Pass) ([]Finding, error) {
	t := p.Trace
	spans := p.compileSpans()
	if len(spans) == 0 {
		return nil, nil
	}
	compile := mergeSpans(slices.Clone(spans))
	wall := p.Result.Summary.WallUs
	if wall <= 0 || us(compile) < CompileMinShare*wall {
		return nil, nil
	}
	ids, recompiles := compileIDs(t)
	if sc := compilesPerStep(t, spans); sc.everyStep() {
		return []Finding{recompileFinding(p, sc, ids)}, nil
	}

	// CUDA graphs: recording vs replay.
	var record trace.Duration
	var captures, replays int
	for i := range t.APICalls {
		c := &t.APICalls[i]
		switch {
		case strings.HasPrefix(c.Name, "cudaGraphInstantiate") || strings.HasPrefix(c.Name, "cudaStreamBeginCapture") || strings.HasPrefix(c.Name, "cudaStreamEndCapture"):
			record += c.Dur()
			if strings.HasPrefix(c.Name, "cudaGraphInstantiate") {
				captures++
			}
		case strings.HasPrefix(c.Name, "cudaGraphLaunch"):
			replays++
		}
	}

	cw := p.coldWarm(spans)
	ev := []Evidence{
		{Text: fmt.Sprintf("torch.compile (Dynamo tracing, Inductor lowering and code generation) runs for %s of the %s traced (%.0f%%)",
			compile, fmtUs(wall), us(compile)/wall*100)},
	}
	if len(ids) > 0 {
		ev = append(ev, Evidence{Text: fmt.Sprintf("%d compilations (compile ids %s), %d of them recompilations of an already compiled frame (a new shape or a failed guard)",
			len(ids), strings.Join(ids, ", "), recompiles)})
	}
	if captures > 0 || replays > 0 {
		ev = append(ev, Evidence{Text: fmt.Sprintf("CUDA graphs: %d recorded (capture and instantiate take %s), %d replays (cudaGraphLaunch)", captures, record, replays)})
	}
	if len(cw.Rows) > 0 {
		ev = append(ev, Evidence{Text: "cold (first) vs warm calls of repeated ranges:", Table: cw})
	}
	ev = append(ev, Evidence{Text: "saving model: the compile time, paid once per process and input shape (a warm start skips it): no steady-state step gets shorter"})
	fix := "keep compilation out of the measured or served path: warm up each input shape once before timing/serving, persist Inductor's caches " +
		"between runs (TORCHINDUCTOR_CACHE_DIR on a kept disk, torch.compiler.save_cache_artifacts()/load_cache_artifacts())"
	if recompiles > 0 {
		fix += fmt.Sprintf("; the %d recompilation(s) come from new input shapes: pass dynamic=True to torch.compile or torch._dynamo.mark_dynamic() the varying dimension, or pad inputs to a few fixed sizes", recompiles)
	}
	title := fmt.Sprintf("torch.compile: %s of %s traced (%.0f%%), %d compile(s), %d recompile(s)",
		compile, fmtUs(wall), us(compile)/wall*100, max(len(ids), 1), recompiles)
	if len(cw.Rows) > 0 && !cw.Rows[0][4].Empty() {
		title += "; first call " + cw.Rows[0][4].String() + " slower"
	}
	return []Finding{{
		Title:      title,
		Subject:    "torch.compile",
		Severity:   High,
		SavingUs:   us(compile),
		SavingFrom: FromOneOff,
		Measures: []Measure{
			{"compile time", Dur(compile)},
			{"traced wall time", DurUs(wall)},
			{"compilations", Count(float64(max(len(ids), 1)))},
			{"recompilations", Count(float64(recompiles))},
		},
		Evidence:   ev,
		Fix:        fix,
		Confidence: High,
	}}, nil
}

// coldWarm compares the first call of each repeated record_function range
// (names equal once trailing digits are dropped) with the later ones.
func (p *Pass) coldWarm(compile []trace.Span) *Table {
	t := p.Trace
	type group struct {
		name  string
		spans []trace.Span
	}
	groups := map[string]*group{}
	var order []string
	for i := range t.Annotations {
		a := &t.Annotations[i]
		n := a.Name
		if strings.HasPrefix(n, "ProfilerStep#") || strings.HasPrefix(n, "## ") || strings.Contains(n, "compile_id=") || compileEvent(n) {
			continue
		}
		key := strings.TrimRight(n, "0123456789")
		g := groups[key]
		if g == nil {
			g = &group{name: key}
			groups[key] = g
			order = append(order, key)
		}
		g.spans = append(g.spans, a.Span)
	}
	tb := NewTable(Col("range", KindName), Col("calls", KindCount), Col("cold", KindDuration), Col("warm median", KindDuration),
		Column{Name: "cold/warm", Kind: KindRate, Unit: "×"}, Col("compile inside cold", KindDuration))
	for _, key := range order {
		g := groups[key]
		if len(g.spans) < 2 {
			continue
		}
		slices.SortFunc(g.spans, func(a, b trace.Span) int { return cmp.Compare(a.Start, b.Start) })
		cold := g.spans[0]
		var inside []trace.Span
		for _, s := range compile {
			if s.Start >= cold.Start && s.End <= cold.End {
				inside = append(inside, s)
			}
		}
		if len(inside) == 0 {
			continue
		}
		warm := make([]float64, 0, len(g.spans)-1)
		for _, s := range g.spans[1:] {
			warm = append(warm, us(s.Dur()))
		}
		w := median(warm)
		ratio := Value{}
		if w > 0 {
			ratio = Rate(us(cold.Dur())/w, "×")
		}
		tb.Add(NameCell(key+"*"), Count(float64(len(g.spans))), Dur(cold.Dur()), DurUs(w), ratio, Dur(mergeSpans(inside)))
	}
	return tb
}

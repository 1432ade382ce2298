package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// Thresholds of compiled-slower.
const (
	// CompiledSlowerMinRatio is how much slower (as a fraction) the
	// compiled calls' steady-state median must be than the eager calls'.
	CompiledSlowerMinRatio = 0.1
	// CompiledSlowerMinUs is the least difference per call (µs) worth a
	// finding.
	CompiledSlowerMinUs = 5.0
)

// CompiledSlower finds torch.compile'd code that is slower than the same
// work run eagerly in the same trace.
var CompiledSlower = &Analyzer{
	Name: "compiled-slower",
	Doc: fmt.Sprintf("Compares repeated top-level record_function ranges that run compiled code (a Torch-Compiled Region or "+
		"CompiledFunction inside) with repeated ranges that run eagerly (when the trace has one of each, or names that match once "+
		"'compiled'/'eager' are dropped): their steady-state medians (first call and calls that compile left out). Reported when the "+
		"compiled calls are at least %.0f%% and %.0f µs slower. Saving model: the difference per call, kept by running eagerly (or "+
		"regained by a compiled region large enough to amortise its guards and launches).", CompiledSlowerMinRatio*100, CompiledSlowerMinUs),
	Requires: []*Analyzer{Steps, KernelCategories, Attribution, Launches, IdleGaps, Shapes, CompileRegions, Phases},
	Run:      runCompiledSlower,
}

// callGroup is a repeated range with its steady-state figures.
type callGroup struct {
	label     string
	key       string
	compiled  bool
	calls     int
	wall, gpu float64
}

func runCompiledSlower(p *Pass) ([]Finding, error) {
	t, ix := p.Trace, p.ix
	groups := rangeGroups(t, launchCounts(t))
	compile := mergedSpans(p.compileSpans())
	var cg []callGroup
	for key, c := range groups {
		if len(c.spans) < 2 {
			continue
		}
		slices.SortFunc(c.spans, func(a, b trace.Span) int { return cmp.Compare(a.Start, b.Start) })
		g := callGroup{label: c.label, key: strings.TrimRight(key, "_-# ")}
		nCompiled := 0
		var walls, gpus []float64
		for i, s := range c.spans {
			if ix.compiledIn(c.thread, s) {
				nCompiled++
			}
			if i == 0 || overlapsAny(s, compile) {
				continue // warm-up or compilation
			}
			walls = append(walls, us(s.Dur()))
			gpus = append(gpus, us(ix.busyIn(s.Start, s.End)))
		}
		if len(walls) == 0 {
			continue
		}
		g.compiled = 2*nCompiled >= len(c.spans)
		g.calls = len(c.spans)
		g.wall, g.gpu = median(walls), median(gpus)
		cg = append(cg, g)
	}
	slices.SortFunc(cg, func(a, b callGroup) int { return cmp.Compare(a.key, b.key) })
	var out []Finding
	for _, c := range cg {
		if !c.compiled {
			continue
		}
		e, ok := eagerPeer(c, cg)
		if !ok || c.wall < (1+CompiledSlowerMinRatio)*e.wall || c.wall-e.wall < CompiledSlowerMinUs {
			continue
		}
		diff := c.wall - e.wall
		tb := NewTable(Col("range", KindName), Col("calls", KindCount), Col("median call (steady)", KindDuration), Col("GPU busy per call", KindDuration))
		tb.Add(NameCell(c.label+" (compiled)"), Count(float64(c.calls)), DurUs(c.wall), DurUs(c.gpu))
		tb.Add(NameCell(e.label+" (eager)"), Count(float64(e.calls)), DurUs(e.wall), DurUs(e.gpu))
		out = append(out, Finding{
			Title: fmt.Sprintf("torch.compile'd range %s is %.1f× slower than eager range %s: %s vs %s a call",
				ClipName(c.label, 18), c.wall/e.wall, ClipName(e.label, 18), fmtUs(c.wall), fmtUs(e.wall)),
			Subject:    "compiled " + c.label + " vs eager " + e.label,
			Severity:   severityByShare(diff / c.wall),
			SavingUs:   diff,
			SavingFrom: FromGPUIdle,
			Measures: []Measure{
				{"compiled call (steady median)", DurUs(c.wall)},
				{"eager call (steady median)", DurUs(e.wall)},
				{"difference per call", DurUs(diff)},
			},
			Evidence: []Evidence{
				{Text: "steady-state calls (the first call and calls that compile left out):", Table: tb},
				{Text: fmt.Sprintf("GPU busy per call: compiled %s, eager %s; the rest of each call is host time (guards, the compiled wrapper, launches)",
					fmtUs(c.gpu), fmtUs(e.gpu))},
				{Text: "saving model: the steady-state difference per call"},
			},
			Fix: "at these shapes the compiled code costs more than it saves: keep this function eager, or compile a larger region so guard " +
				"checks and launches amortise over more work, try mode=\"reduce-overhead\" (CUDA graphs remove the per-kernel launches), and " +
				"check that max-autotune's chosen kernels beat the eager ones at these sizes (TORCHINDUCTOR_MAX_AUTOTUNE_REPORT / compile logs)",
			Confidence: Medium,
		})
	}
	return out, nil
}

// eagerPeer returns the eager group c is compared with: the only eager
// group, or the one whose name matches c's once "compiled"/"eager" words
// are dropped.
func eagerPeer(c callGroup, groups []callGroup) (callGroup, bool) {
	var eager []callGroup
	for _, g := range groups {
		if !g.compiled {
			eager = append(eager, g)
		}
	}
	if len(eager) == 1 {
		return eager[0], true
	}
	strip := func(s string) string {
		s = strings.ToLower(s)
		for _, w := range []string{"compiled", "compile", "eager", "_", "-", " "} {
			s = strings.ReplaceAll(s, w, "")
		}
		return s
	}
	for _, g := range eager {
		if strip(g.key) == strip(c.key) {
			return g, true
		}
	}
	return callGroup{}, false
}

// overlapsAny reports whether s overlaps one of the sorted disjoint spans.
func overlapsAny(s trace.Span, merged []trace.Span) bool {
	i, _ := slices.BinarySearchFunc(merged, s.Start, func(m trace.Span, at trace.Time) int { return cmp.Compare(m.End, at) })
	return i < len(merged) && merged[i].Start < s.End
}

// compiledIn reports whether a host range on thread th runs compiled code:
// an op of torch.compile's runtime (Torch-Compiled Region,
// CompiledFunction) inside it.
func (ix *index) compiledIn(th trace.Index, s trace.Span) bool {
	t := ix.t
	i, _ := slices.BinarySearchFunc(t.Ops, threadTime{th, s.Start}, func(o trace.Op, k threadTime) int {
		if c := cmp.Compare(o.Thread, k.th); c != 0 {
			return c
		}
		return cmp.Compare(o.Start, k.at)
	})
	for ; i < len(t.Ops) && t.Ops[i].Thread == th && t.Ops[i].Start <= s.End; i++ {
		n := t.Ops[i].Name
		if strings.HasPrefix(n, "Torch-Compiled Region") || strings.Contains(n, "CompiledFunction") {
			return true
		}
	}
	return false
}

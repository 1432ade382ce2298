package analyze

import (
	"cmp"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// CompiledComparisons pairs each repeated range that runs compiled code
// with the repeated range that runs the same work eagerly and judges where
// the compiled calls cost more. Compiled-slower reports the verdicts;
// fusion-candidate reads them to tell chains that compiling would not
// help.
var CompiledComparisons = &Analyzer{
	Name: "compiled-comparisons",
	Doc: "Pairs repeated top-level ranges that run compiled code with their eager peers (steady-state medians per call of owned GPU time, " +
		"host time and queue at entry) and judges whether the compiled calls are slower on the GPU, only on the host where the step shows it, or neither.",
	Requires: []*Analyzer{CompileRegions, Ownership},
	Fact: func(p *Pass) (any, error) {
		cg := compiledGroups(p)
		cf := &CompiledFacts{}
		for _, c := range cg {
			if !c.compiled {
				continue
			}
			e, ok := eagerPeer(c, cg)
			if !ok {
				continue
			}
			if v, ok := judgeCompiled(c, e); ok {
				v.eagerWork = p.ownedBy(e.thread, e.all)
				cf.slower = append(cf.slower, v)
			}
		}
		return cf, nil
	},
}

// CompiledFacts is the result of CompiledComparisons: the compiled ranges
// that cost more than their eager peers.
type CompiledFacts struct {
	slower []compiledPair
}

// compiledPair is compiled group c against its eager peer e: slower on
// the GPU (gpuSlower), else by exposed µs of host time a call the GPU
// does not hide. eagerWork are the GPU activities the eager calls own.
type compiledPair struct {
	c, e      callGroup
	gpuSlower bool
	exposed   float64
	eagerWork []int
}

// compiledFacts returns the CompiledComparisons fact p's analyzer requires.
func (p *Pass) compiledFacts() (*CompiledFacts, error) {
	return FactOf[*CompiledFacts](p, CompiledComparisons)
}

// judgeCompiled compares compiled group c with its eager peer e: slower
// on the GPU when the compiled calls' owned GPU time is larger, else when
// their host time is larger in a way the step shows.
func judgeCompiled(c, e callGroup) (compiledPair, bool) {
	if costsMore(c.gpu, e.gpu) {
		return compiledPair{c: c, e: e, gpuSlower: true}, true
	}
	if !costsMore(c.wall, e.wall) {
		return compiledPair{}, false
	}
	// Extra host time shows in the step only where the GPU has run out
	// of earlier work: while it still runs what was queued before the
	// call, the host's guards and launches cost nothing.
	exposed := min(c.wall-e.wall, max(0, c.wall-c.queue))
	if !costsMore(e.wall+exposed, e.wall) {
		return compiledPair{}, false
	}
	return compiledPair{c: c, e: e, exposed: exposed}, true
}

// eagerVerdicts holds the verdict on the GPU activities of the eager
// ranges compared with a slower compiled variant: true where the compiled
// kernels were slower, false where only its host time was.
func (cf *CompiledFacts) eagerVerdicts() map[int]bool {
	v := map[int]bool{}
	for _, s := range cf.slower {
		for _, g := range s.eagerWork {
			v[g] = v[g] || s.gpuSlower
		}
	}
	return v
}

// callGroup is a repeated range with its steady-state medians (µs).
type callGroup struct {
	label, key string
	compiled   bool
	calls      int
	// all are every call, steady the calls the medians are over.
	all, steady           []trace.Span
	thread                trace.Index
	wall, gpu, api, queue float64
	activities            float64
}

// compiledGroups returns the repeated top-level ranges with their
// steady-state medians, sorted by name.
func compiledGroups(p *Pass) []callGroup {
	t, ix, own := p.Trace, p.ix, p.Ownership()
	compile := mergedSpans(p.compileSpans())
	var cg []callGroup
	for key, c := range rangeGroups(withinSteps(t), launchCounts(t)) {
		if len(c.spans) < 2 {
			continue
		}
		slices.SortFunc(c.spans, func(a, b trace.Span) int { return cmp.Compare(a.Start, b.Start) })
		g := callGroup{label: c.label, key: strings.TrimRight(key, "_-# "), calls: len(c.spans), all: c.spans, thread: c.thread}
		nCompiled := 0
		var walls, gpus, apis, queues, acts []float64
		for i, s := range c.spans {
			if ix.compiledIn(c.thread, s) {
				nCompiled++
			}
			if i == 0 || overlapsAny(s, compile) {
				continue // warm-up or compilation
			}
			o := own.Of(c.thread, s)
			g.steady = append(g.steady, s)
			walls, gpus, apis = append(walls, us(o.Wall)), append(gpus, us(o.GPUTime)), append(apis, us(o.LaunchAPI))
			queues, acts = append(queues, us(o.QueueAtEntry)), append(acts, float64(o.Activities))
		}
		if len(walls) == 0 {
			continue
		}
		g.compiled = 2*nCompiled >= len(c.spans)
		g.wall, g.gpu, g.api, g.queue, g.activities = median(walls), median(gpus), median(apis), median(queues), median(acts)
		cg = append(cg, g)
	}
	slices.SortFunc(cg, func(a, b callGroup) int { return cmp.Compare(a.key, b.key) })
	return cg
}

// withinSteps returns t with its ProfilerStep ranges left out, so the
// ranges a step holds (an eager and a compiled call side by side) are
// top-level: a shallow copy when there are any.
func withinSteps(t *trace.Trace) *trace.Trace {
	keep := func(a trace.Annotation) bool { return !strings.HasPrefix(a.Name, "ProfilerStep#") }
	if !slices.ContainsFunc(t.Annotations, func(a trace.Annotation) bool { return !keep(a) }) {
		return t
	}
	c := *t
	c.Annotations = nil
	for _, a := range t.Annotations {
		if keep(a) {
			c.Annotations = append(c.Annotations, a)
		}
	}
	return &c
}

// costsMore reports whether a compiled median c exceeds the eager median e
// by compiled-slower's thresholds.
func costsMore(c, e float64) bool {
	return c >= (1+CompiledSlowerMinRatio)*e && c-e >= CompiledSlowerMinUs
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

// compiledIn reports whether a host range on thread th runs compiled code:
// an op of torch.compile's runtime (Torch-Compiled Region,
// CompiledFunction) inside it.
func (ix *index) compiledIn(th trace.Index, s trace.Span) bool {
	t := ix.t
	for i := opAt(t, threadTime{th, s.Start}); i < len(t.Ops) && t.Ops[i].Thread == th && t.Ops[i].Start <= s.End; i++ {
		n := t.Ops[i].Name
		if strings.HasPrefix(n, "Torch-Compiled Region") || strings.Contains(n, "CompiledFunction") {
			return true
		}
	}
	return false
}

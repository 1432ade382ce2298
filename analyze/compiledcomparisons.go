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
	Requires:  []*Analyzer{CompileRegions, Ownership, Launches, OpClasses},
	NoMetrics: true,
	Fact: func(p *Pass) (any, error) {
		oc, err := p.opClasses()
		if err != nil {
			return nil, err
		}
		cg := compiledGroups(p, oc)
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

// compiledGroups returns the repeated top-level ranges, sorted by name,
// with the steady-state medians of those compared (a compiled group and
// its eager peer): the medians of the others are never read, and they
// are most of the work (every call's owned GPU work).
func compiledGroups(p *Pass, oc *OpClassFacts) []callGroup {
	t, ix := p.Trace, p.ix
	compile := mergedSpans(p.compileSpans())
	var cg []callGroup
	for key, c := range rangeGroups(withinSteps(t), launchCountsOf(t, ix.LaunchFacts)) {
		if len(c.spans) < 2 {
			continue
		}
		slices.SortFunc(c.spans, func(a, b trace.Span) int { return cmp.Compare(a.Start, b.Start) })
		g := callGroup{label: c.label, key: strings.TrimRight(key, "_-# "), calls: len(c.spans), all: c.spans, thread: c.thread}
		nCompiled, from := 0, 0
		for i, s := range c.spans {
			var in bool
			if in, from = ix.compiledIn(oc, c.thread, s, from); in {
				nCompiled++
			}
			if i == 0 || overlapsAny(s, compile) {
				continue // warm-up or compilation
			}
			g.steady = append(g.steady, s)
		}
		if len(g.steady) == 0 {
			continue
		}
		g.compiled = 2*nCompiled >= len(c.spans)
		cg = append(cg, g)
	}
	slices.SortFunc(cg, func(a, b callGroup) int { return cmp.Compare(a.key, b.key) })
	compared := make([]bool, len(cg))
	for i, c := range cg {
		if !c.compiled {
			continue
		}
		if e := eagerPeerAt(c, cg); e >= 0 {
			compared[i], compared[e] = true, true
		}
	}
	for i := range cg {
		if compared[i] {
			p.steadyMedians(&cg[i])
		}
	}
	return cg
}

// steadyMedians sets g's medians per call over its steady calls: what
// each call owns is asked chunk by chunk side by side (the calls are
// independent), the medians taken in call order.
func (p *Pass) steadyMedians(g *callGroup) {
	own := p.Ownership()
	owned := make([]Owned, len(g.steady))
	inChunks(len(g.steady), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			owned[i] = own.Of(g.thread, g.steady[i])
		}
	})
	walls, gpus, apis := make([]float64, len(owned)), make([]float64, len(owned)), make([]float64, len(owned))
	queues, acts := make([]float64, len(owned)), make([]float64, len(owned))
	for i, o := range owned {
		walls[i], gpus[i], apis[i] = us(o.Wall), us(o.GPUTime), us(o.LaunchAPI)
		queues[i], acts[i] = us(o.QueueAtEntry), float64(o.Activities)
	}
	g.wall, g.gpu, g.api, g.queue, g.activities = median(walls), median(gpus), median(apis), median(queues), median(acts)
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
	i := eagerPeerAt(c, groups)
	if i < 0 {
		return callGroup{}, false
	}
	return groups[i], true
}

// eagerPeerAt is eagerPeer's index in groups, or -1.
func eagerPeerAt(c callGroup, groups []callGroup) int {
	var eager []int
	for i, g := range groups {
		if !g.compiled {
			eager = append(eager, i)
		}
	}
	if len(eager) == 1 {
		return eager[0]
	}
	strip := func(s string) string {
		s = strings.ToLower(s)
		for _, w := range []string{"compiled", "compile", "eager", "_", "-", " "} {
			s = strings.ReplaceAll(s, w, "")
		}
		return s
	}
	for _, i := range eager {
		if strip(groups[i].key) == strip(c.key) {
			return i
		}
	}
	return -1
}

// compiledIn reports whether a host range on thread th runs compiled code:
// an op of torch.compile's runtime (Torch-Compiled Region,
// CompiledFunction) inside it. The ops on th that start inside s are a
// run of Ops (sorted by thread, then start); their classes say it. The
// search starts at from, the first op of an earlier range on th (or 0),
// and returns the first op of s for the next range's.
func (ix *index) compiledIn(oc *OpClassFacts, th trace.Index, s trace.Span, from int) (bool, int) {
	t := ix.t
	lo := opAtFrom(t, threadTime{th, s.Start}, from)
	hi := opAtFrom(t, threadTime{th, s.End + 1}, lo)
	for i := lo; i < hi; i++ {
		if oc.class[i]&opIsCompiledRun != 0 {
			return true, lo
		}
	}
	return false, lo
}

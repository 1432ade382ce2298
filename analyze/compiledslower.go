package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tracelens/tracelens/trace"
)

// Thresholds of compiled-slower.
const (
	// CompiledSlowerMinRatio is how much more (as a fraction) the compiled
	// calls' steady-state median must cost than the eager calls': owned
	// GPU time for a GPU finding, host time for a host-overhead one.
	CompiledSlowerMinRatio = 0.1
	// CompiledSlowerMinUs is the least difference per call (µs) worth a
	// finding.
	CompiledSlowerMinUs = 5.0
)

// CompiledSlower finds torch.compile'd code that costs more than the same
// work run eagerly in the same trace, and says where: on the GPU (the
// kernels the compiled calls launched take longer) or on the host only
// (guards, the compiled wrapper, launches).
var CompiledSlower = &Analyzer{
	Name: "compiled-slower",
	Doc: fmt.Sprintf("Compares repeated top-level record_function ranges that run compiled code (a Torch-Compiled Region or "+
		"CompiledFunction inside) with repeated ranges that run eagerly (when the trace has one of each, or names that match once "+
		"'compiled'/'eager' are dropped; ProfilerStep ranges do not enclose) by three steady-state medians per call (first call and calls "+
		"that compile left out): the GPU time it owns, its host time and its queue at entry. "+
		"Owned GPU time is that of the kernels, memcpys and memsets its launch calls put on the GPU, wherever and whenever they ran "+
		"(the Ownership fact; not GPU busy time inside the range's window); host time is the range's wall (and its launch API time); "+
		"the queue at entry is how long the GPU still ran earlier work after the call began. "+
		"Compiled is slower on the GPU when its owned GPU time is at least %.0f%% and %.0f µs more; "+
		"otherwise, when only its host time is (by the same thresholds), a host-overhead finding whose saving is the host difference "+
		"the GPU does not hide (the part of the compiled call after its queue at entry drains), at most medium severity; "+
		"no finding when the compiled call's extra host time hides behind queued GPU work. "+
		"Saving model: the owned GPU time difference per call on the critical path, or the exposed host difference per call, times the calls per step.",
		CompiledSlowerMinRatio*100, CompiledSlowerMinUs),
	Requires: []*Analyzer{CompileRegions, Ownership},
	Run:      runCompiledSlower,
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

func runCompiledSlower(p *Pass) ([]Finding, error) {
	cg := compiledGroups(p)
	var out []Finding
	for _, c := range cg {
		if !c.compiled {
			continue
		}
		e, ok := eagerPeer(c, cg)
		if !ok {
			continue
		}
		if f, ok := p.compiledFinding(c, e); ok {
			out = append(out, f)
		}
	}
	return out, nil
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

// compiledFinding compares compiled group c with its eager peer e: a GPU
// finding when the compiled calls' owned GPU time is larger, else a host
// finding when their host time is larger in a way the step shows.
func (p *Pass) compiledFinding(c, e callGroup) (Finding, bool) {
	perStep := p.callsPerStep(c)
	if costsMore(c.gpu, e.gpu) {
		return p.compiledGPUFinding(c, e, perStep), true
	}
	if !costsMore(c.wall, e.wall) {
		return Finding{}, false
	}
	// Extra host time shows in the step only where the GPU has run out
	// of earlier work: while it still runs what was queued before the
	// call, the host's guards and launches cost nothing.
	exposed := min(c.wall-e.wall, max(0, c.wall-c.queue))
	if !costsMore(e.wall+exposed, e.wall) {
		return Finding{}, false
	}
	return p.compiledHostFinding(c, e, exposed, perStep), true
}

// callsPerStep is how many of c's calls a step holds (1 when its calls
// lie outside the steps: the trace's steps are the eager calls, or none).
func (p *Pass) callsPerStep(c callGroup) float64 {
	t := p.Trace
	in := 0
	for _, s := range c.all {
		if t.StepOf(s.Start) >= 0 {
			in++
		}
	}
	if in == 0 || len(t.Steps) == 0 {
		return 1
	}
	return float64(in) / float64(len(t.Steps))
}

// compiledTable is the evidence both findings show: per variant the
// steady calls' owned GPU time, host time and queue at entry.
func compiledTable(c, e callGroup) *Table {
	tb := NewTable(Col("range", KindName), Col("calls", KindCount), Col("steady calls", KindCount), Col("owned GPU per call", KindDuration),
		Col("GPU activities per call", KindCount), Col("host per call", KindDuration), Col("launch API per call", KindDuration),
		Col("queue at entry", KindDuration))
	for _, g := range []callGroup{c, e} {
		kind := " (eager)"
		if g.compiled {
			kind = " (compiled)"
		}
		tb.Add(NameCell(g.label+kind), Count(float64(g.calls)), Count(float64(len(g.steady))), DurUs(g.gpu), Count(g.activities),
			DurUs(g.wall), DurUs(g.api), DurUs(g.queue))
	}
	return tb
}

// compiledMeasures are the steady medians both findings report.
func compiledMeasures(c, e callGroup) []Measure {
	return []Measure{
		{"compiled owned GPU time per call (steady median)", DurUs(c.gpu)},
		{"eager owned GPU time per call (steady median)", DurUs(e.gpu)},
		{"compiled host time per call (steady median)", DurUs(c.wall)},
		{"eager host time per call (steady median)", DurUs(e.wall)},
		{"compiled queue at entry (steady median)", DurUs(c.queue)},
		{"eager queue at entry (steady median)", DurUs(e.queue)},
	}
}

// ownedNote explains what "owned" means in the evidence.
const ownedNote = "owned GPU time: the kernels, memcpys and memsets launched by calls made inside the range on its thread, " +
	"whenever they ran (asynchronous work that runs after the range closes included; earlier ranges' work still running in its window " +
	"excluded); host time: the range's wall; queue at entry: how long the GPU still ran earlier-launched work after the call began"

// compiledGPUFinding reports compiled calls whose own kernels take longer.
func (p *Pass) compiledGPUFinding(c, e callGroup, perStep float64) Finding {
	diff := c.gpu - e.gpu
	compiledWork, eagerWork := p.ownedBy(c.thread, c.steady), p.ownedBy(e.thread, e.all)
	host := "its host time per call is similar"
	if costsMore(c.wall, e.wall) {
		host = fmt.Sprintf("its host time per call is longer too (%s vs %s: guards, the compiled wrapper, launches)", fmtUs(c.wall), fmtUs(e.wall))
	}
	return Finding{
		Title: fitNames(func(cn, en string) string {
			return fmt.Sprintf("compiled %q: %.1f× slower on the GPU than eager %q (%s vs %s a call)", cn, c.gpu/e.gpu, en, fmtUs(c.gpu), fmtUs(e.gpu))
		}, c.label, e.label),
		Subject:    "compiled " + c.label + " vs eager " + e.label,
		Severity:   severityByShare(p.shareOfStep(diff * perStep)),
		SavingUs:   diff * perStep,
		SavingFrom: FromKernelTime,
		Measures:   append(compiledMeasures(c, e), Measure{"owned GPU time difference per call", DurUs(diff)}, Measure{"compiled calls per step", Count(perStep)}),
		Evidence: []Evidence{
			{Text: "steady-state calls (the first call and calls that compile left out):", Table: compiledTable(c, e)},
			{Text: fmt.Sprintf("the GPU time the compiled calls own is %.1f× the eager calls' (%s vs %s a call); %s", c.gpu/e.gpu, fmtUs(c.gpu), fmtUs(e.gpu), host)},
			{Text: ownedNote},
			{Text: "saving model: the owned GPU time difference per call, times the compiled calls per step, on the critical path"},
		},
		Fix: "at these shapes the compiled kernels take longer than the eager ones: keep this function eager, or check that the compiled " +
			"graph's kernels beat eager's at these sizes (max-autotune's choices: TORCHINDUCTOR_MAX_AUTOTUNE_REPORT / compile logs; a " +
			"decomposition that replaced a library GEMM or added copies) and compile with options that keep the library kernels",
		Confidence: Medium,
		activities: compiledWork,
		eagerWork:  eagerWork,
		gpuSlower:  true,
	}
}

// fitNames returns title(compiled, eager) with the two range names
// clipped only as far as the title needs to fit MaxTitle.
func fitNames(title func(c, e string) string, c, e string) string {
	for _, w := range []int{40, 24, 18, 14} {
		if s := title(ClipName(c, w), ClipName(e, w)); utf8.RuneCountInString(s) <= MaxTitle {
			return s
		}
	}
	return title(ClipName(c, 10), ClipName(e, 10))
}

// ownedBy returns the GPU activities the ranges spans on thread th own.
func (p *Pass) ownedBy(th trace.Index, spans []trace.Span) []int {
	var out []int
	for _, s := range spans {
		out = append(out, p.Ownership().Activities(th, s)...)
	}
	return out
}

// compiledHostFinding reports compiled calls whose own GPU work is not
// slower but whose host time is, where the step shows it.
func (p *Pass) compiledHostFinding(c, e callGroup, exposed, perStep float64) Finding {
	gpu := fmt.Sprintf("its kernels take %s a call vs eager's %s", fmtUs(c.gpu), fmtUs(e.gpu))
	if c.gpu < e.gpu {
		gpu = fmt.Sprintf("its kernels are faster: %s a call vs eager's %s", fmtUs(c.gpu), fmtUs(e.gpu))
	}
	hidden := ""
	if exposed < c.wall-e.wall {
		hidden = fmt.Sprintf("; %s of the difference hides behind GPU work queued before the call", fmtUs(c.wall-e.wall-exposed))
	}
	f := Finding{
		Title: fitNames(func(cn, en string) string {
			return fmt.Sprintf("compiled %q: host +%s a call vs eager %q; GPU %s vs %s", cn, fmtUs(c.wall-e.wall), en, fmtUs(c.gpu), fmtUs(e.gpu))
		}, c.label, e.label),
		Subject: "compiled " + c.label + " vs eager " + e.label,
		// Host overhead, with the compiled kernels no slower: the fix is on
		// the host side and keeps the GPU gain, so at most medium.
		Severity:   lowerSeverity(Medium, severityByShare(p.shareOfStep(exposed*perStep))),
		SavingUs:   exposed * perStep,
		SavingFrom: FromGPUIdle,
		Measures: append(compiledMeasures(c, e), Measure{"host time difference per call", DurUs(c.wall - e.wall)},
			Measure{"host difference the GPU does not hide, per call", DurUs(exposed)}, Measure{"compiled calls per step", Count(perStep)}),
		Evidence: []Evidence{
			{Text: "steady-state calls (the first call and calls that compile left out):", Table: compiledTable(c, e)},
			{Text: fmt.Sprintf("the compiled calls are not slower on the GPU (%s); the difference is host time: %s vs %s a call, launch API %s vs %s%s",
				gpu, fmtUs(c.wall), fmtUs(e.wall), fmtUs(c.api), fmtUs(e.api), hidden)},
			{Text: ownedNote},
			{Text: "saving model: the host time difference per call that the GPU does not hide (the compiled call's time after its queue at entry drains), times the compiled calls per step"},
		},
		Fix: "the compiled kernels are not the problem; torch.compile's per-call host overhead (guard checks, the compiled wrapper, one launch per " +
			"kernel) is: capture the compiled function in CUDA graphs (mode=\"reduce-overhead\") or compile a larger region so the overhead " +
			"amortises over more work (in this trace the eager calls finish sooner)",
		Confidence: Medium,
		eagerWork:  p.ownedBy(e.thread, e.all),
	}
	if slices.Contains(profilerOptions(p.Trace), "with_stack") {
		// The Python tracer inflates exactly this host path (guard
		// checks and the compiled wrapper are Python): on the recorded
		// pairs the untraced compiled calls were the faster ones.
		f.Severity, f.Confidence = Low, Low
		f.Evidence = append(f.Evidence, Evidence{Text: "the host times were recorded with with_stack, whose Python tracer inflates the compiled " +
			"wrapper's guard checks more than eager dispatch: time both variants untraced (CUDA events around a synchronized call) " +
			"before acting on this difference"})
	}
	return f
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

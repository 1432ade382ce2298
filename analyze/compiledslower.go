package analyze

import (
	"fmt"
	"slices"
	"unicode/utf8"
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
	Requires: []*Analyzer{CompiledComparisons, Ownership},
	Run:      runCompiledSlower,
}

func runCompiledSlower(p *Pass) ([]Finding, error) {
	cf, err := p.compiledFacts()
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, v := range cf.slower {
		perStep := p.callsPerStep(v.c)
		if v.gpuSlower {
			out = append(out, p.compiledGPUFinding(v.c, v.e, perStep))
		} else {
			out = append(out, p.compiledHostFinding(v.c, v.e, v.exposed, perStep))
		}
	}
	return out, nil
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
	compiledWork := p.ownedBy(c.thread, c.steady)
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

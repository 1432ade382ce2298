package analyze

import (
	"fmt"
	"slices"
	"strings"
)

// Thresholds of inference-phases.
const (
	// InferLaunchBoundBusy is the share of a phase's host time below
	// which the GPU work it owns makes it launch-bound.
	InferLaunchBoundBusy = 0.5
	// InferGPUBoundBusy is the share above which it is GPU-bound.
	InferGPUBoundBusy = 0.8
)

// InferencePhases tells an LLM generate loop's prefill from its decode and
// judges each.
var InferencePhases = &Analyzer{
	Name: "inference-phases",
	Doc: fmt.Sprintf("For a generate loop marked with record_function ranges named prefill and decode (any case; also 'prompt'/'generate_token'), "+
		"measures each phase per call: host time, the GPU time it owns (by correlation id), kernel launches; and judges it: launch-bound "+
		"when its owned GPU busy time is under %.0f%% of its host time, GPU-bound above %.0f%%. The per-step view averages the two "+
		"phases away. Reported for a launch-bound decode. Saving model: per step, the decode calls' host time the GPU does not fill "+
		"(calls × (host − owned GPU busy) per call), which replaying each token's launches as a CUDA graph removes; at most the "+
		"ledger's launch-overhead, framework-host and unexplained-idle lines.", InferLaunchBoundBusy*100, InferGPUBoundBusy*100),
	Requires: []*Analyzer{Steps, Ownership},
	Run:      runInferencePhases,
}

// inferPhase is one phase's figures over the steady steps.
type inferPhase struct {
	name                           string
	calls                          int
	wallUs, busyUs, gpuUs, launchN float64
}

// phaseOf names the inference phase a range marks, or "".
func phaseOf(name string) string {
	n := strings.ToLower(name)
	switch {
	case strings.Contains(n, "prefill") || n == "prompt":
		return "prefill"
	case strings.Contains(n, "decode") || strings.Contains(n, "generate_token"):
		return "decode"
	}
	return ""
}

func runInferencePhases(p *Pass) ([]Finding, error) {
	t, r := p.Trace, p.Result
	first := FirstSteady(len(t.Steps))
	steps := float64(len(t.Steps) - first)
	if len(t.Steps) == 0 || steps <= 0 {
		return nil, nil
	}
	ph := map[string]*inferPhase{}
	for i := range t.Annotations {
		a := &t.Annotations[i]
		name := phaseOf(a.Name)
		if a.GPU || name == "" || t.StepOf(a.Start) < first {
			continue
		}
		x := ph[name]
		if x == nil {
			x = &inferPhase{name: name}
			ph[name] = x
		}
		w := p.Ownership().Of(a.Thread, a.Span)
		x.calls++
		x.wallUs += us(w.Wall)
		x.busyUs += us(w.GPUBusy)
		x.gpuUs += us(w.GPUTime)
		x.launchN += float64(w.Launches)
	}
	dec, pre := ph["decode"], ph["prefill"]
	if dec == nil || dec.calls == 0 || dec.wallUs <= 0 || dec.busyUs/dec.wallUs >= InferLaunchBoundBusy {
		return nil, nil
	}
	return []Finding{inferFinding(dec, pre, steps, r.StepStats.SteadyWallUs)}, nil
}

// verdict says what bounds a phase.
func (x *inferPhase) verdict() string {
	switch share := x.busyUs / x.wallUs; {
	case share < InferLaunchBoundBusy:
		return "launch-bound"
	case share >= InferGPUBoundBusy:
		return "GPU-bound"
	}
	return "mixed"
}

// inferFinding builds inference-phases' finding for a launch-bound decode.
func inferFinding(dec, pre *inferPhase, steps, step float64) Finding {
	tb := NewTable(Col("phase", KindName), Col("calls per step", KindCount), Col("host per call", KindDuration),
		Col("GPU busy per call", KindDuration), Col("busy", KindPercent), Col("launches per call", KindCount), Col("verdict", KindName))
	rows := []*inferPhase{dec}
	if pre != nil && pre.calls > 0 && pre.wallUs > 0 {
		rows = append([]*inferPhase{pre}, rows...)
	}
	for _, x := range rows {
		n := float64(x.calls)
		tb.Add(NameCell(x.name), Count(n/steps), DurUs(x.wallUs/n), DurUs(x.busyUs/n), Percent(min(x.busyUs/x.wallUs, 1)),
			Count(x.launchN/n), NameCell(x.verdict()))
	}
	n := float64(dec.calls)
	saving := max(dec.wallUs-dec.busyUs, 0) / steps
	evidence := []Evidence{
		{Text: "per phase over the steady steps (GPU time owned by each call's launches, by correlation id):", Table: tb},
		{Text: fmt.Sprintf("decode: %s calls per step, each %s of host time for %s of GPU work (%.0f%% busy) in %s launches: the host "+
			"launching each token's kernels, not the GPU, sets the token rate", FormatCount(n/steps), fmtUs(dec.wallUs/n), fmtUs(dec.busyUs/n),
			dec.busyUs/dec.wallUs*100, FormatCount(dec.launchN/n))},
		{Text: "saving model: per step, the decode calls' host time the GPU does not fill, which one graph replay per token removes"},
	}
	fix := "capture each decode step in a CUDA graph: torch.compile(model, mode=\"reduce-overhead\") with a static KV cache " +
		"(preallocated to the maximum length, so shapes do not change per token), or torch.cuda.CUDAGraph around one token's forward"
	if pre != nil && pre.calls > 0 && pre.verdict() == "GPU-bound" {
		fix += "; prefill is GPU-bound: there the attention backend and the GEMMs' efficiency matter, not launches"
	}
	return Finding{
		Title: fmt.Sprintf("decode launch-bound: %.0f%% GPU busy, %s launches per token; prefill %s",
			dec.busyUs/dec.wallUs*100, FormatCount(dec.launchN/n), prefillWord(pre)),
		Subject:     "inference phases",
		Severity:    severityByShare(saving / max(step, 1)),
		SavingUs:    saving,
		SavingFrom:  FromLaunchGaps,
		LedgerLines: slices.Clone(launchLines),
		Measures: []Measure{
			{"decode calls per step", Count(n / steps)},
			{"decode host time per call", DurUs(dec.wallUs / n)},
			{"decode GPU busy per call", DurUs(dec.busyUs / n)},
			{"decode launches per call", Count(dec.launchN / n)},
		},
		Evidence:   evidence,
		Fix:        fix,
		Confidence: High,
	}
}

// prefillWord is the prefill's verdict for the title.
func prefillWord(pre *inferPhase) string {
	if pre == nil || pre.calls == 0 || pre.wallUs <= 0 {
		return "not marked"
	}
	return fmt.Sprintf("%s, %.0f%% busy", pre.verdict(), min(pre.busyUs/pre.wallUs, 1)*100)
}

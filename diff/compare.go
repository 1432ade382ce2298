package diff

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/stats"
	"github.com/tracelens/tracelens/trace"
)

// Options tune a comparison. The zero value is benchstat's default:
// α = 0.05, first step dropped.
type Options struct {
	// Alpha is the significance level of the U test (0 means 0.05).
	Alpha float64
	// KeepWarmup keeps each run's first step, which usually carries
	// one-time costs (allocator growth, cuBLAS handles, compilation).
	KeepWarmup bool
}

// DefaultAlpha is the significance level used when Options.Alpha is 0.
const DefaultAlpha = 0.05

// Side describes one run as the comparison used it.
type Side struct {
	Source    string
	Framework string
	Device    string
	// Steps is the number of steps in the trace and Samples how many of
	// them were compared (Steps−1 when the warm-up step was dropped).
	Steps   int
	Samples int
	// StepsSynthetic is true when the trace marks no steps and the whole
	// trace is a single sample.
	StepsSynthetic bool
	// PeriodBound says which side of the pipeline sets the steady step
	// time (analyze.BoundGPU, analyze.BoundHost; StepStats.SteadyPeriodBound).
	PeriodBound string
}

// Metric is one per-step summary metric compared between runs.
type Metric struct {
	// Key is the metric's JSON key ("step_wall_us") and Name how tables
	// label it ("step wall").
	Key  string
	Name string
	// Time is true for durations in µs, false for counts.
	Time bool
	Delta
}

// Result is the comparison of two runs.
type Result struct {
	Base, New Side
	Alpha     float64
	// Summary holds the per-step metrics in a fixed order: step time
	// (the period, analyze.Step.PeriodUs), host period, GPU period, step
	// wall, GPU busy, GPU idle, launches, kernels, launch API time, CPU op
	// time.
	Summary []Metric
	// StepChange splits the steady step time's change into the step
	// ledger's lines.
	StepChange  StepChange
	Kernels     []Row
	Categories  []Row
	Ops         []TotalRow
	Annotations []TotalRow
	Findings    Findings
	// CrossFramework is true when the runs come from different frameworks
	// or share no kernel names, so kernels compare only by category.
	CrossFramework bool
	// Notes explain what the numbers cannot say (too few steps, no step
	// markers, different frameworks, a profiler-dominated or unsteady
	// step).
	Notes []string
	// ProfilerLimited is true when the profiler's estimated host work is
	// over ProfilerShareLimit of a host-bound side's step: the traced step
	// change need not be the untraced program's (see the note).
	ProfilerLimited bool
}

// Metric keys of Result.Summary, in order.
const (
	StepWall  = "step_wall_us"
	GPUBusy   = "gpu_busy_us"
	GPUIdle   = "gpu_idle_us"
	Launches  = "launches"
	Kernels   = "kernels"
	LaunchAPI = "launch_api_us"
	CPUOp     = "cpu_op_us"
)

// Metric returns the summary metric with key (StepWall, GPUBusy, ...), or
// nil.
func (r *Result) Metric(key string) *Metric {
	for i := range r.Summary {
		if r.Summary[i].Key == key {
			return &r.Summary[i]
		}
	}
	return nil
}

// Kernel returns the kernel row named name (or merging a kernel named
// name), or nil.
func (r *Result) Kernel(name string) *Row {
	for i := range r.Kernels {
		k := &r.Kernels[i]
		if k.Name == name || slices.Contains(k.BaseNames, name) || slices.Contains(k.NewNames, name) {
			return k
		}
	}
	return nil
}

// CompareTraces analyzes both traces with every analyzer and compares them:
// the entry point for callers that hold traces, not analyses.
func CompareTraces(baseTrace, newTrace *trace.Trace, opt Options) (*Result, error) {
	ba, err := analyze.Run(baseTrace, analyze.Config{})
	if err != nil {
		return nil, fmt.Errorf("analyzing base %s: %w", baseTrace.Source, err)
	}
	na, err := analyze.Run(newTrace, analyze.Config{})
	if err != nil {
		return nil, fmt.Errorf("analyzing new %s: %w", newTrace.Source, err)
	}
	return Compare(ba, na, opt)
}

// Compare compares the analyses of two runs: summary metrics and kernel
// and category times per step with a U test each, ops and annotations by
// mean CPU time per compared step, findings by analyzer and subject. It reads only the two Results
// (every per-step figure is analyze's), and fails only on missing inputs
// or an invalid α.
func Compare(base, next *analyze.Result, opt Options) (*Result, error) {
	if base == nil || next == nil {
		return nil, errors.New("diff: both runs need an analysis")
	}
	alpha := opt.Alpha
	if alpha == 0 {
		alpha = DefaultAlpha
	}
	if !(alpha > 0 && alpha < 1) {
		return nil, fmt.Errorf("diff: α must be between 0 and 1, got %g", alpha)
	}
	b := newProfile(base, opt.KeepWarmup)
	n := newProfile(next, opt.KeepWarmup)
	r := &Result{Base: b.side, New: n.side, Alpha: alpha}
	r.Notes = append(r.Notes, sampleNotes("base", b)...)
	r.Notes = append(r.Notes, sampleNotes("new", n)...)

	for _, m := range summaryMetrics {
		bs, ns := b.metrics[m.key], n.metrics[m.key]
		if m.optional && (len(bs) == 0 || len(ns) == 0) {
			continue
		}
		r.Summary = append(r.Summary, Metric{Key: m.key, Name: m.name, Time: m.time, Delta: CompareSamples(bs, ns, alpha)})
	}
	step := r.Metric(StepTime).Delta
	r.Notes = append(r.Notes, unsteadyNotes(step)...)
	r.Summary = append(r.Summary, phaseMetrics(base, next, opt.KeepWarmup, alpha)...)
	ns := [2]int{b.side.Samples, n.side.Samples}
	if perStepUntestable(ns[0], ns[1], alpha) {
		b.addOccurrences(base, opt.KeepWarmup)
		n.addOccurrences(next, opt.KeepWarmup)
	}
	// The four tables read only the profiles and the Results, and each
	// runs a U test per row (thousands of rows on a big trace: a third of
	// diff's time after the analyses, on one core): built side by side.
	var wg sync.WaitGroup
	wg.Go(func() { r.Kernels = matchKernels(b.kernels, n.kernels, ns, alpha) })
	wg.Go(func() { r.Categories = compareSeries(b.categories, n.categories, ns, alpha) })
	wg.Go(func() { r.Ops = compareTotals(base, next, opTotals, opOccurrences, opt.KeepWarmup, alpha) })
	wg.Go(func() { r.Annotations = compareTotals(base, next, annotationTotals, nil, opt.KeepWarmup, alpha) })
	wg.Wait()
	r.Findings = compareFindings(base.Findings, next.Findings)
	judgeResolved(&r.Findings, base, next)
	r.StepChange = decompose(base, next)
	if r.ProfilerLimited = profilerLimited(base, next); r.ProfilerLimited {
		r.Notes = append(r.Notes, profilerNote(r, base, next))
	}
	if note := detectableNote(step, alpha); note != "" {
		r.Notes = append(r.Notes, note)
	}
	if note := profilerOptionsNote(base.ProfilerOptions, next.ProfilerOptions); note != "" {
		r.Notes = append(r.Notes, note)
	}

	shared := 0
	for _, k := range r.Kernels {
		if k.Match != Unmatched {
			shared++
		}
	}
	switch {
	case b.side.Framework != n.side.Framework && b.side.Framework != "" && n.side.Framework != "":
		r.CrossFramework = true
		r.Notes = append(r.Notes, fmt.Sprintf("base is %s and new is %s: kernel names are not comparable across frameworks, so compare kernel time by category", b.side.Framework, n.side.Framework))
	case shared == 0 && len(b.kernels) > 0 && len(n.kernels) > 0:
		r.CrossFramework = true
		r.Notes = append(r.Notes, "the runs share no kernel names (different libraries or a rewritten kernel): compare kernel time by category")
	}
	return r, nil
}

// sampleNotes says when a side's samples cannot support a claim.
func sampleNotes(label string, p *profile) []string {
	var notes []string
	if p.side.StepsSynthetic {
		notes = append(notes, fmt.Sprintf("%s (%s) marks no ProfilerStep#N: its whole trace is one sample, so its \"per step\" figures cover the whole run", label, p.side.Source))
	}
	if p.side.Samples < stats.MinSamples(DefaultAlpha) {
		notes = append(notes, fmt.Sprintf("%s has %d step(s) to compare: a difference needs ≥ %d per side to be tested, so none is claimed significant", label, p.side.Samples, stats.MinSamples(DefaultAlpha)))
	}
	return notes
}

// summaryMetrics are Result.Summary's metrics in order; an optional one
// is left out unless both runs have samples of it.
var summaryMetrics = []struct {
	key, name      string
	time, optional bool
}{
	{StepTime, "step period", true, false},
	{UntracedStep, "step period untraced (est.)", true, true},
	{HostPeriod, "host period", true, false},
	{GPUPeriod, "GPU period", true, false},
	{StepWall, "step wall", true, false},
	{GPUBusy, "GPU busy", true, false},
	{GPUIdle, "GPU idle", true, false},
	{Launches, "launches", false, false},
	{Kernels, "kernels", false, false},
	{LaunchAPI, "launch API time", true, false},
	{CPUOp, "CPU op time", true, false},
}

// profilerOptionsNote warns when the runs were recorded with different
// torch.profiler options: with_stack and profile_memory add host work to
// every op (~10 % of the step on opts_gpt_stack_mem), so host times and the
// findings built on them (launch-bound, fusion) move although the program
// did not. Empty when the options agree.
func profilerOptionsNote(base, next []string) string {
	b, n := slices.Sorted(slices.Values(base)), slices.Sorted(slices.Values(next))
	if slices.Equal(b, n) {
		return ""
	}
	list := func(o []string) string {
		if len(o) == 0 {
			return "none"
		}
		return strings.Join(o, ", ")
	}
	return fmt.Sprintf("the runs were recorded with different profiler options (base: %s; new: %s): host times and the findings built on them differ by the profiler's own overhead, not the code's — compare like with like", list(b), list(n))
}

package diff

import (
	"cmp"
	"errors"
	"fmt"
	"math"
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

// Status tells what happened to a kernel (or category) between runs.
type Status string

// Kernel statuses. Same and Changed are decided by the U test, so a kernel
// whose time moved within the noise stays Same. When the test cannot
// decide (too few steps a side: with 2 steps a side the smallest p-value is
// 0.33), "same" would assert what was never tested, so the row is judged
// on its medians instead: ChangedUntested when they moved by more than
// UntestedChangePct, Untested otherwise.
const (
	Same            Status = "same"
	Changed         Status = "changed"
	ChangedUntested Status = "changed, untested"
	Untested        Status = "untested"
	Added           Status = "added"
	Removed         Status = "removed"
)

// UntestedChangePct is the change of the median, in percent either way,
// above which a row the U test cannot judge is reported as
// ChangedUntested: large enough to stay clear of the ±1–8 % step-to-step
// spread of real GPU traces.
const UntestedChangePct = 10

// Match tells how a kernel row's base and new kernels were paired.
type Match string

// How rows pair up: by exact name first, then by normalized name within the
// same category (NormalizeKernelName); added and removed rows have none.
const (
	ByName       Match = "name"
	ByNormalized Match = "normalized"
	Unmatched    Match = ""
)

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

// Row is one kernel or kernel category compared between runs. Its Delta
// compares the time per step (the sum over each step's launches, 0 in a
// step without any), so runs with different step counts compare fairly.
type Row struct {
	// Name is the kernel name both runs share, the normalized name when
	// Match is ByNormalized, the kernel's name in its one run for added and
	// removed kernels, or the category name in category rows.
	Name string
	// BaseNames and NewNames list the exact names a ByNormalized row
	// merges; nil otherwise.
	BaseNames, NewNames []string
	Status              Status
	Match               Match
	Category            string
	// BaseTotalUs and NewTotalUs are the time over the compared steps,
	// BaseCount and NewCount the launches in them.
	BaseTotalUs, NewTotalUs float64
	BaseCount, NewCount     int
	Delta
	// Occurrences compares the kernel's launches one by one when the
	// steps are too few for the per-step test (fewer than
	// stats.MinSamples(α) a side): an occurrence-level effect size with an
	// interval, not a test across steps. Nil otherwise, for added and
	// removed rows, for categories, and without the traces.
	Occurrences *Occurrences
}

// TotalRow compares a per-step figure from the analysis (ops,
// annotations): the CPU time per step, inclusive of child ops (an op's
// calls nested in a call of the same name counted once, as analyze's
// OpStat.TotalCPUUs), tested across steps like kernel rows, or, with too
// few steps, op by op (Occurrences).
type TotalRow struct {
	Name string
	// Kind is "op", or the annotation kind (analyze.AnnotationRange,
	// analyze.AnnotationModule).
	Kind string
	// BaseUs and NewUs are the mean CPU time per compared step (analyze's
	// per-step figures, the warm-up step left out as for every other
	// row); BaseCalls and NewCalls the calls in the compared steps.
	BaseUs, NewUs       float64
	BaseCalls, NewCalls int
	// Pct is the change in percent; NaN when BaseUs is 0.
	Pct float64
	// Steps compares the per-step time (whose means are BaseUs and NewUs)
	// with the U test, as Row.Delta does for kernels; a side without the
	// row counts 0 in each of its compared steps.
	Steps Delta
	// Occurrences compares an op's calls one by one (their inclusive CPU
	// time) when the steps are too few for Steps to be tested; nil
	// otherwise, for annotations, and without the traces.
	Occurrences *Occurrences
}

// FindingChange is one finding (analyzer and subject) and what became of
// it.
type FindingChange struct {
	ID string
	// Subject is what the finding is about (analyze.Finding.Subject): the
	// same analyzer's findings about different subjects (two fusion
	// chains) are different findings.
	Subject string
	Title   string
	// Severity is the finding's severity in the run that has it (the new
	// run's when both do).
	Severity string
	// BaseSavingUs and NewSavingUs sum the estimated saving per step of the
	// findings with this analyzer and subject in each run.
	BaseSavingUs, NewSavingUs float64
	// BaseUntracedSavingUs sums the base findings' savings for the
	// program run without the profiler (analyze.Finding.UntracedSavingUs),
	// where their model gives one: what untraced timings of the fix are
	// compared with.
	BaseUntracedSavingUs float64
	// OneOff marks a one-time cost (analyze.FromOneOff: a cold start, a
	// compilation), which saves nothing per step: BaseOneOffUs and
	// NewOneOffUs sum its cost in each run instead.
	OneOff                    bool
	BaseOneOffUs, NewOneOffUs float64
	// LedgerLines are the step-ledger lines the base run's finding said
	// its saving comes out of (analyze.Finding.LedgerLines).
	LedgerLines []string
	// DeliveredUs is the measured change of those lines in the steady
	// step, base minus new (positive: they shrank), and DeliveredRatio it
	// over BaseSavingUs, the predicted saving (0 when nothing was
	// predicted); Measured is false when a side has no ledger.
	DeliveredUs    float64
	DeliveredRatio float64
	Measured       bool
	// Reduced marks a persisting finding that the fix cut to half or less
	// of what it was worth per step (of its cost, for a one-time cost):
	// still reported, but no longer the same problem.
	Reduced bool
	// SubjectGone marks a resolved finding whose subject is an op that
	// ran in BASE's steps and in none of NEW's (host-sync's aten::item
	// after a .item() was removed): what it measured is gone, whatever
	// the traced ledger lines show (a profiled host that runs ahead can
	// grow them: sync_accum's fix cut the untraced step 12 % and grew the
	// traced one 20 %).
	SubjectGone bool
}

// Findings sorts finding ids into resolved (only in base), new (only in
// new) and persisting (in both). Unreported holds the findings only in base
// whose ledger lines did not give back what they predicted (judgeResolved):
// the time the finding measured is still there; its estimate (often built
// on host times the profiler inflates) merely fell under its reporting
// threshold.
type Findings struct {
	Resolved, New, Persisting, Unreported []FindingChange
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
	{StepTime, "step time", true, false},
	{UntracedStep, "step time untraced (est.)", true, true},
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

// series is one kernel's (or category's) samples in one run.
type series struct {
	name     string
	category string
	// perStep is the time in µs in each compared step; count and total
	// cover the compared steps.
	perStep []float64
	count   int
	total   float64
	// occ holds the durations (µs) of each occurrence in the compared
	// steps (kernels only, when the steps are too few for the per-step
	// test; nil without the trace); autotune marks a kernel row of
	// torch.compile's autotuner launches (analyze.KernelTiming.Autotune).
	occ      []float64
	autotune bool
}

func (s *series) merge(o *series) {
	for i := range s.perStep {
		s.perStep[i] += o.perStep[i]
	}
	s.occ = append(s.occ, o.occ...)
	s.count += o.count
	s.total += o.total
}

// matchKernels pairs kernels by exact name, then the rest by normalized
// name within a category; what remains is added or removed.
func matchKernels(base, new []*series, samples [2]int, alpha float64) []Row {
	newByName := map[string]*series{}
	for _, s := range new {
		newByName[s.name] = s
	}
	var rows []func() Row
	paired := map[string]bool{}
	var restBase []*series
	for _, s := range base {
		if o, ok := newByName[s.name]; ok {
			rows = append(rows, func() Row { return pairRow(s.name, s, o, ByName, samples, alpha) })
			paired[s.name] = true
			continue
		}
		restBase = append(restBase, s)
	}
	var restNew []*series
	for _, s := range new {
		if !paired[s.name] {
			restNew = append(restNew, s)
		}
	}
	// Group what is left by normalized name and category; a group found in
	// both runs becomes one row summing its kernels.
	type key struct{ norm, cat string }
	type group struct {
		merged  *series
		members []*series
	}
	groupBy := func(ss []*series) (map[key]*group, []key) {
		groups := map[key]*group{}
		var order []key
		for _, s := range ss {
			k := key{NormalizeKernelName(s.name), s.category}
			g := groups[k]
			if g == nil {
				c := *s
				c.perStep = slices.Clone(s.perStep)
				c.occ = slices.Clone(s.occ)
				groups[k] = &group{merged: &c, members: []*series{s}}
				order = append(order, k)
				continue
			}
			g.merged.merge(s)
			g.members = append(g.members, s)
		}
		return groups, order
	}
	names := func(ss []*series) []string {
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = s.name
		}
		slices.Sort(out)
		return out
	}
	bg, border := groupBy(restBase)
	ng, norder := groupBy(restNew)
	for _, k := range border {
		b := bg[k]
		if n, ok := ng[k]; ok {
			rows = append(rows, func() Row {
				row := pairRow(k.norm, b.merged, n.merged, ByNormalized, samples, alpha)
				row.BaseNames, row.NewNames = names(b.members), names(n.members)
				return row
			})
			continue
		}
		for _, s := range b.members {
			rows = append(rows, func() Row { return pairRow(s.name, s, nil, Unmatched, samples, alpha) })
		}
	}
	for _, k := range norder {
		if _, ok := bg[k]; ok {
			continue
		}
		for _, s := range ng[k].members {
			rows = append(rows, func() Row { return pairRow(s.name, nil, s, Unmatched, samples, alpha) })
		}
	}
	return sortedRows(rows)
}

// sortedRows computes rows side by side and sorts them; none is nil (JSON
// null, as before they ran side by side).
func sortedRows(rows []func() Row) []Row {
	if len(rows) == 0 {
		return nil
	}
	out := sideBySide(rows)
	sortRows(out)
	return out
}

// compareSeries pairs series by exact name only (categories).
func compareSeries(base, new []*series, samples [2]int, alpha float64) []Row {
	newByName := map[string]*series{}
	for _, s := range new {
		newByName[s.name] = s
	}
	var rows []func() Row
	for _, s := range base {
		o := newByName[s.name]
		m := ByName
		if o == nil {
			m = Unmatched
		}
		rows = append(rows, func() Row { return pairRow(s.name, s, o, m, samples, alpha) })
		delete(newByName, s.name)
	}
	for _, s := range new {
		if _, ok := newByName[s.name]; ok {
			rows = append(rows, func() Row { return pairRow(s.name, nil, s, Unmatched, samples, alpha) })
		}
	}
	return sortedRows(rows)
}

// pairRow compares two series; either may be nil (added, removed), and
// then counts as zero in each of that run's compared steps (samples holds
// the base and new step counts), so a vanished kernel's −100% is tested
// like any other change.
func pairRow(name string, b, n *series, m Match, samples [2]int, alpha float64) Row {
	row := Row{Name: name, Match: m}
	var bs, ns []float64
	if b != nil {
		row.Category, row.BaseTotalUs, row.BaseCount, bs = b.category, b.total, b.count, b.perStep
	}
	if n != nil {
		row.Category, row.NewTotalUs, row.NewCount, ns = n.category, n.total, n.count, n.perStep
	}
	if b == nil {
		bs = make([]float64, samples[0])
	}
	if n == nil {
		ns = make([]float64, samples[1])
	}
	row.Delta = CompareSamples(bs, ns, alpha)
	if b != nil && n != nil && perStepUntestable(len(bs), len(ns), alpha) {
		row.Occurrences = compareOccurrences(b.occ, n.occ, alpha)
	}
	switch {
	case b == nil:
		row.Status = Added
	case n == nil:
		row.Status = Removed
	default:
		row.Status = judge(&row.Delta)
	}
	return row
}

// judge is the status of a row present in both runs: the U test's verdict
// when it can reach α, else the medians' change against UntestedChangePct.
func judge(d *Delta) Status {
	switch {
	case d.Significant:
		return Changed
	case !d.Testable():
		if math.Abs(d.Pct) > UntestedChangePct {
			return ChangedUntested
		}
		return Untested
	}
	return Same
}

// sortRows puts the heaviest rows first: by the larger of the two per-step
// medians, then by name, so output is deterministic.
func sortRows(rows []Row) {
	slices.SortStableFunc(rows, func(a, b Row) int {
		wa := max(a.Base.Median, a.New.Median)
		wb := max(b.Base.Median, b.New.Median)
		if c := cmp.Compare(wb, wa); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
}

// pct is the change from b to n in percent, NaN when b is 0 and n is not.
func pct(b, n float64) float64 {
	switch {
	case b == n:
		return 0
	case b == 0:
		return math.NaN()
	}
	return (n/b - 1) * 100
}

// total is one op's or annotation's figures per step, from the analysis.
type total struct {
	kind, name string
	perStep    []analyze.StepShare
}

func opTotals(a *analyze.Result) []total {
	out := make([]total, 0, len(a.Ops))
	for _, op := range a.Ops {
		out = append(out, total{"op", op.Name, op.PerStep})
	}
	return out
}

func annotationTotals(a *analyze.Result) []total {
	out := make([]total, 0, len(a.Annotations))
	for _, an := range a.Annotations {
		out = append(out, total{an.Kind, an.Name, an.PerStep})
	}
	return out
}

// totalSide is one run's figures for one op or annotation row.
type totalSide struct {
	perStep []float64
	calls   int
	occ     []float64
}

// compareTotals pairs the rows list gives for each run by kind and name
// and compares their CPU time per compared step (the same steps as every
// other per-step figure of the comparison): the mean, the U test across
// steps, and, where occ gives each name's occurrences (ops) and the steps
// are too few for the test, the occurrence-level comparison.
func compareTotals(b, n *analyze.Result, list func(*analyze.Result) []total, occ func(*analyze.Result, int) map[string][]float64, keepWarmup bool, alpha float64) []TotalRow {
	type key struct{ kind, name string }
	sides := map[key]*[2]totalSide{}
	var order []key
	runs := []*analyze.Result{b, n}
	var samples [2]int
	for side, a := range runs {
		samples[side] = len(a.Steps) - firstCompared(len(a.Steps), keepWarmup)
	}
	if !perStepUntestable(samples[0], samples[1], alpha) {
		occ = nil // the per-step test decides: no need for single calls
	}
	for side, a := range runs {
		first := firstCompared(len(a.Steps), keepWarmup)
		var occs map[string][]float64
		if occ != nil {
			occs = occ(a, first)
		}
		for _, t := range list(a) {
			k := key{t.kind, t.name}
			if sides[k] == nil {
				sides[k] = &[2]totalSide{}
				order = append(order, k)
			}
			sr := sampled("", "", t.perStep, first)
			if sr == nil {
				continue
			}
			ts := &sides[k][side]
			if ts.perStep == nil {
				ts.perStep = make([]float64, len(sr.perStep))
			}
			for i, us := range sr.perStep {
				ts.perStep[i] += us
			}
			ts.calls += sr.count
			ts.occ = occs[t.name]
		}
	}
	rows := make([]func() TotalRow, 0, len(order))
	for _, k := range order {
		s := sides[k]
		if s[0].calls == 0 && s[1].calls == 0 {
			continue // only outside the compared steps
		}
		rows = append(rows, func() TotalRow { return totalRow(k.kind, k.name, s, samples, alpha) })
	}
	out := sideBySide(rows)
	sortTotals(out)
	return out
}

// totalRow compares one op's or annotation's two sides.
func totalRow(kind, name string, s *[2]totalSide, samples [2]int, alpha float64) TotalRow {
	r := TotalRow{Name: name, Kind: kind, BaseCalls: s[0].calls, NewCalls: s[1].calls}
	per := [2][]float64{}
	for i := range per {
		per[i] = s[i].perStep
		if per[i] == nil {
			per[i] = make([]float64, samples[i])
		}
	}
	r.BaseUs, r.NewUs = mean(per[0]), mean(per[1])
	r.Pct = pct(r.BaseUs, r.NewUs)
	r.Steps = CompareSamples(per[0], per[1], alpha)
	if s[0].calls > 0 && s[1].calls > 0 && perStepUntestable(len(per[0]), len(per[1]), alpha) {
		r.Occurrences = compareOccurrences(s[0].occ, s[1].occ, alpha)
	}
	return r
}

// mean is the mean of v, 0 for none.
func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	return sum / float64(len(v))
}

// sortTotals puts the largest absolute change first.
func sortTotals(rows []TotalRow) {
	slices.SortStableFunc(rows, func(a, b TotalRow) int {
		if c := cmp.Compare(math.Abs(b.NewUs-b.BaseUs), math.Abs(a.NewUs-a.BaseUs)); c != 0 {
			return c
		}
		if c := cmp.Compare(max(b.BaseUs, b.NewUs), max(a.BaseUs, a.NewUs)); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
}

// compareFindings matches findings on analyzer and subject: an analyzer
// may report several (one per fusion chain, say), and a chain fixed while
// another appears is one resolved and one new finding. What matters across
// runs is whether the
// problem is still there.
func compareFindings(base, new []analyze.Finding) Findings {
	type agg struct {
		change   FindingChange
		inB, inN bool
	}
	type key struct{ id, subject string }
	byKey := map[key]*agg{}
	var order []key
	add := func(f analyze.Finding, isNew bool) {
		k := key{f.ID, f.Subject}
		a := byKey[k]
		if a == nil {
			a = &agg{change: FindingChange{ID: f.ID, Subject: f.Subject, Title: f.Title, Severity: f.Severity}}
			byKey[k] = a
			order = append(order, k)
		}
		if f.SavingFrom == analyze.FromOneOff {
			a.change.OneOff = true
		}
		if !isNew {
			for _, l := range f.LedgerLines {
				if !slices.Contains(a.change.LedgerLines, l) {
					a.change.LedgerLines = append(a.change.LedgerLines, l)
				}
			}
		}
		if isNew {
			if !a.inN {
				a.change.Title, a.change.Severity = f.Title, f.Severity
			}
			a.inN = true
			a.change.NewSavingUs += f.SavingUs
			a.change.NewOneOffUs += f.OneOffUs
		} else {
			a.inB = true
			a.change.BaseSavingUs += f.SavingUs
			a.change.BaseUntracedSavingUs += f.UntracedSavingUs
			a.change.BaseOneOffUs += f.OneOffUs
		}
	}
	for _, f := range base {
		add(f, false)
	}
	for _, f := range new {
		add(f, true)
	}
	var out Findings
	for _, k := range order {
		a := byKey[k]
		switch {
		case a.inB && a.inN:
			c := a.change
			if c.OneOff {
				c.Reduced = c.NewOneOffUs <= c.BaseOneOffUs/2
			} else {
				c.Reduced = c.BaseSavingUs > 0 && c.NewSavingUs <= c.BaseSavingUs/2
			}
			out.Persisting = append(out.Persisting, c)
		case a.inB:
			out.Resolved = append(out.Resolved, a.change)
		default:
			out.New = append(out.New, a.change)
		}
	}
	return out
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

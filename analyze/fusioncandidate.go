package analyze

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tracelens/tracelens/trace"
)

// Thresholds of fusion-candidate.
const (
	// FusionMinChain is the fewest op calls whose consecutive
	// memory-bound kernels form a chain worth fusing (one call's own
	// kernels are one).
	FusionMinChain = 2
	// FusionMinRepeats is how often a chain must recur (across steps or
	// layers) to be a pattern rather than a one-off.
	FusionMinRepeats = 2
	// FusionMinShare is the smallest estimated saving, as a share of the
	// median step, worth a finding.
	FusionMinShare = 0.01
	// FusionMaxFindings bounds how many chains are reported (the largest
	// savings first).
	FusionMaxFindings = 3
	// fallbackGBps is the DRAM bandwidth assumed when the device is not
	// in the peak table.
	fallbackGBps = 1000
)

// FusionCandidate finds recurring chains of small memory-bound kernels.
var FusionCandidate = &Analyzer{
	Name: "fusion-candidate",
	Doc: fmt.Sprintf("Finds chains of consecutive memory-bound kernels (elementwise, rng, copy/gather, reduction, memset) from at least %d op calls on one "+
		"stream, all launched by framework ops, that recur at least %d times with the same kernels (across steps or layers): each kernel "+
		"writes a tensor the next reads back, and each costs a launch. A chain stays inside one call of one user function (where the fix goes). Library GEMMs, compiler-fused kernels (Triton, XLA fusions), kernels launched inside torch.compile regions or CUDA graph replays (the compiler already chose what to fuse) and memcpys break a chain. "+
		"Saving model per occurrence, in two parts the finding reports apart: GPU time saved, the intermediate tensors' write and read traffic "+
		"(from the ops' input shapes and dtypes) at the device's peak DRAM bandwidth, at most the chain's kernel time minus its longest kernel; and launch gaps removed, "+
		"for each of the (op calls − 1) launches saved the median launch API time, at most the time the device (all streams) sat idle before that kernel. "+
		"The kernels one op call launches (topk's radix select, a two-pass reduction) are its implementation: no intermediate or launch between them is saved, and the longest call's kernels are the work a fusion keeps at least. "+
		"The step shortens by the gaps removed plus the GPU time saved times the share of the chain's kernel time during which the GPU was the bottleneck (critical-path). "+
		"So a chain never saves more than its span (kernel time plus gaps) minus its longest kernel. "+
		"Kernels that belong to an op which also runs a GEMM or attention kernel (autocast weight casts, cuBLAS workspace memsets, a bias gradient's reduction), "+
		"AccumulateGrad's (its .grad output must persist), a collective's ops' (FSDP copy-in, c10d), foreach multi_tensor_apply kernels and communication kernels never join a chain, and a chain ends where the tensor shape changes (the next op works on another tensor). "+
		"Reported when the saving is at least %.0f%% of the median step; at most %d chains, largest first. "+
		"Where compiled-slower found this function's torch.compile'd variant slower on the GPU in the same trace, the fix names a hand-written kernel, not torch.compile.",
		FusionMinChain, FusionMinRepeats, FusionMinShare*100, FusionMaxFindings),
	Requires: []*Analyzer{Steps, KernelCategories, Attribution, Phases, IdleGaps, CompiledComparisons, OpClasses},
	Run:      runFusionCandidate,
}

// fusionSaving is a chain's saving per step in its two parts, with the
// times that bound them: gpuUs (kernel time fusing removes: at most the
// intermediates' traffic at peak bandwidth and the chain's kernel time
// minus its longest kernel) and gapsUs (device idle time between the
// chain's kernels that the launches saved remove: per gap at most one
// median launch call). gpuUs ≤ kernelUs and gapsUs ≤ idleUs, so their
// sum stays within spanUs, the chain's extent on the GPU.
// critShare is the part of the chain's kernel time during which the GPU
// was the bottleneck and critUs the part of gpuUs that shortens the step
// (gpuUs × critShare, at most the step's GPU-bound time).
type fusionSaving struct {
	gpuUs, gapsUs, kernelUs, idleUs, spanUs float64
	critShare, critUs                       float64
}

// chainSaving sums a chain's saving model over its occurrences, per step
// (see fusionSaving; critShare and critUs are left to the caller), with
// the intermediates' traffic in all and the chain's kernels, from each
// occurrence's figures (occurrenceSavings) in the occurrences' order.
func chainSaving(gr *chainGroup, occs []occSaving, steps float64) (fusionSaving, float64, []int) {
	var sv fusionSaving
	var trafficTotal float64
	n := 0
	for _, occ := range gr.occ {
		n += len(occ)
	}
	kernels := make([]int, 0, n)
	for i, occ := range gr.occ {
		kernels = append(kernels, occ...)
		o := &occs[i]
		sv.gpuUs += o.gpuSave / steps
		sv.gapsUs += o.gapSave / steps
		sv.kernelUs += o.kernelUs / steps
		sv.idleUs += o.idle / steps
		sv.spanUs += o.span / steps
		trafficTotal += o.traffic
	}
	return sv, trafficTotal, kernels
}

// occSaving is one occurrence of a chain in the saving model: the GPU
// time fusing it saves, the launch gaps removed, its kernel time, the
// device idle time between its kernels, its span (µs) and its
// intermediates' traffic (bytes).
type occSaving struct {
	gpuSave, gapSave, kernelUs, idle, span, traffic float64
}

// occurrenceSaving is occurrence occ's figures (see occSaving), from the
// columns of the fusable GPU activities (each one's op, start, end and
// device).
// An occurrence is consecutive GPU activities on one device and stream,
// so a kernel's predecessor in it is the one before it in the GPU order.
// inputs holds the bytes of the first input of the op of each kernel it
// reads one of, in order (inputTexts), from this occurrence's on: it
// returns the rest. idle sums the device's idle gaps.
func (p *Pass) occurrenceSaving(occ []int, cols *fusionColumns, inputs []int64, idle *idleCursor, launchCost, bw float64) (occSaving, []int64) {
	ops, start, end := cols.ops, cols.start, cols.end
	dev := cols.device[occ[0]]
	var sum, longest, unit trace.Duration
	var traffic, idleUs, gapSave float64
	for i, g := range occ {
		d := trace.Duration(end[g] - start[g])
		sum += d
		// An op call's own kernels stay as they are: its longest
		// call's kernels are the work a fusion keeps at least, and
		// no intermediate or launch between them goes.
		if i > 0 && ops[g-1] != trace.None && ops[g-1] == ops[g] {
			unit += d
			longest = max(longest, unit)
			continue
		}
		unit = d
		longest = max(longest, unit)
		if i == 0 {
			continue
		}
		traffic += 2 * float64(inputs[0])
		inputs = inputs[1:]
		// The launch saved before kernel i shortens the chain only
		// by the time the device sat idle waiting for it: another
		// stream's work in the gap keeps the GPU busy anyway.
		gap := idle.idleIn(dev, end[g-1], start[g])
		idleUs += us(gap)
		gapSave += min(launchCost, us(gap))
	}
	// Fusing keeps at least the longest kernel's work and saves at
	// most the intermediates' traffic at peak bandwidth.
	gpuSave := us(sum - longest)
	if traffic > 0 {
		gpuSave = min(gpuSave, traffic/(bw*1e9)*1e6)
	}
	span := us(trace.Duration(end[occ[len(occ)-1]] - start[occ[0]]))
	return occSaving{gpuSave: gpuSave, gapSave: gapSave, kernelUs: us(sum), idle: idleUs, span: span, traffic: traffic}, inputs
}

func runFusionCandidate(p *Pass) ([]Finding, error) {
	t := p.Trace
	cs, err := p.fusionChains()
	if err != nil {
		return nil, err
	}
	cf, err := p.compiledFacts()
	if err != nil {
		return nil, err
	}
	verdicts := cf.eagerVerdicts()
	stepUs := p.Result.StepStats.MedianWallUsNoFirst
	steps := float64(max(p.Result.StepStats.Count, 1))
	launchCost := p.Result.Launches.MedianAPIUs
	bw := float64(fallbackGBps)
	if pk := PeakFor(t.DeviceName()); pk != nil {
		bw = pk.GBps
	}
	type cand struct {
		f      Finding
		saving float64
	}
	var cands []cand
	occs := p.occurrenceSavings(cs, launchCost, bw)
	for ki, gr := range cs.byKey {
		if len(gr.occ) < FusionMinRepeats {
			continue
		}
		sv, trafficTotal, kernels := chainSaving(gr, occs[ki], steps)
		// GPU time saved shortens the step only while the GPU is the
		// bottleneck (the Critical fact): in a launch-bound step the
		// fused kernel just leaves the GPU idle longer. The gaps removed
		// are GPU idle time already, so they count in full.
		sv.critShare = 1
		if p.critical != nil {
			sv.critShare = p.critical.shareOfActivities(kernels)
		}
		sv.critUs = min(sv.gpuUs*sv.critShare, max(p.Result.StepStats.SteadyGPUBoundUs, 0))
		saving := sv.critUs + sv.gapsUs
		if stepUs <= 0 || saving < FusionMinShare*stepUs {
			continue
		}
		f := p.fusionFinding(gr, cs.cols, sv, trafficTotal/float64(len(gr.occ)), launchCost, bw, verdicts)
		f.activities, f.launchUs, f.splitByAnalyzer = kernels, sv.gapsUs, true
		if sv.gapsUs > saving/2 {
			// Mostly GPU idle between the chain's kernels, waiting for
			// launches: the part launch-bound also draws on.
			f.SavingFrom = FromLaunchGaps
		} else {
			f.GPUSavingUs = sv.gpuUs
		}
		cands = append(cands, cand{f, saving})
	}
	slices.SortStableFunc(cands, func(a, b cand) int { return cmp.Compare(b.saving, a.saving) })
	var out []Finding
	for i := range min(len(cands), FusionMaxFindings) {
		out = append(out, cands[i].f)
	}
	return out, nil
}

// compiledVerdict returns compiled-slower's verdict on a chain's kernels
// (CompiledFacts.eagerVerdicts): measured whether one of them ran in an eager range
// compiled-slower compared, gpuSlower whether that compiled variant was
// slower on the GPU.
func compiledVerdict(gr *chainGroup, verdicts map[int]bool) (measured, gpuSlower bool) {
	for _, occ := range gr.occ {
		for _, g := range occ {
			if v, ok := verdicts[g]; ok {
				measured, gpuSlower = true, gpuSlower || v
			}
		}
	}
	return measured, gpuSlower
}

func (p *Pass) fusionFinding(gr *chainGroup, cols *fusionColumns, sv fusionSaving, traffic, launchCost, bw float64, verdicts map[int]bool) Finding {
	t, ix := p.Trace, p.ix
	rep := gr.occ[0]
	n, calls := len(rep), ix.opCalls(rep)
	tb, ops, callOps, names := p.chainTable(gr, cols)
	chain := compactChain(callOps)
	where := ix.userFuncs(rep)
	whereText := "the code that launches them"
	if len(where) > 0 {
		whereText = strings.Join(where, ", ")
	}
	perStep := float64(len(gr.occ)) / float64(max(p.Result.StepStats.Count, 1))
	saving := sv.critUs + sv.gapsUs
	share := p.shareOfStep(saving)
	sev := Low
	switch {
	case share >= 0.1:
		sev = High
	case share >= 0.03:
		sev = Medium
	}
	a := &t.GPU[rep[0]]
	measured, gpuSlower := compiledVerdict(gr, verdicts)
	verdict := compileUntried
	switch {
	case gpuSlower:
		verdict = compileGPUSlower
	case measured:
		verdict = compileHostSlower
	}
	return Finding{
		Title: fmt.Sprintf("fuse %s: %s in a row, %d times (%s per step)",
			titleChain(chain, callOps), kernelsOfCalls(n, calls), len(gr.occ), FormatCount(math.Round(perStep*10)/10)),
		Subject:    chain,
		Severity:   sev,
		SavingUs:   saving,
		SavingFrom: FromKernelTime,
		Measures: []Measure{
			{"kernels in the chain", Count(float64(n))},
			{"occurrences", Count(float64(len(gr.occ)))},
			{"occurrences per step", Count(perStep)},
			{"GPU time per step", DurUs(sv.kernelUs)},
			{"GPU idle between the chain's kernels per step", DurUs(sv.idleUs)},
			{"chain span per step", DurUs(sv.spanUs)},
			{"GPU time saved per step", DurUs(sv.gpuUs)},
			{"share of these kernels' time the GPU is the bottleneck", Percent(sv.critShare)},
			{"GPU time saved on the critical path per step", DurUs(sv.critUs)},
			{"launch gaps removed per step", DurUs(sv.gapsUs)},
			{"intermediate traffic per occurrence", Bytes(traffic)},
			{"median launch API time", DurUs(launchCost)},
			{"peak DRAM bandwidth", Rate(bw*1e9, "B/s")},
		},
		Evidence: []Evidence{
			{Text: fmt.Sprintf("the chain %s: the same %d kernels run back to back on device %d stream %d, %s, %d times in the trace",
				chain, n, a.Device, a.Stream, launchedBy(n, calls), len(gr.occ)),
				Table:   tb,
				Kernels: names,
				place: &Place{Span: trace.Span{Start: a.Start, End: t.GPU[rep[len(rep)-1]].End}, Device: a.Device, Stream: a.Stream,
					What: fmt.Sprintf("%d kernels back to back", n)}},
			{Text: fmt.Sprintf("saving model, per step: %s of GPU time saved (%s of intermediate tensors written and read back per occurrence at %.0f GB/s peak DRAM bandwidth, at most the chain's %s of kernel time minus its longest %s), "+
				"of which %s shortens the step (the GPU is the bottleneck for %.0f%% of these kernels' time; for the rest the host queues the next kernel after they end and the GPU would only idle longer), "+
				"plus %s of launch gaps removed (launches saved per occurrence: %d, each at most %s median launch API time and at most the GPU idle time before its kernel: %s per step in all); "+
				"together within the chain's span of %s per step",
				fmtUs(sv.gpuUs), FormatBytes(traffic), bw, fmtUs(sv.kernelUs), longestWhat(n, calls), fmtUs(sv.critUs), sv.critShare*100, fmtUs(sv.gapsUs), calls-1, fmtUs(launchCost), fmtUs(sv.idleUs), fmtUs(sv.spanUs))},
		},
		Fix:        fusionFix(t, chain, whereText, calls, allBackward(ops), verdict),
		Confidence: Medium,
	}
}

// chainTable lists a chain's kernels (mean time over its occurrences, op,
// Python line) with the op of each kernel, of each op call and the kernel
// names.
func (p *Pass) chainTable(gr *chainGroup, cols *fusionColumns) (tb *Table, ops, callOps, names []string) {
	t, ix := p.Trace, p.ix
	rep := gr.occ[0]
	tb = NewTable(Col("#", KindCount), Col("kernel", KindName), Col("category", KindName), Col("op", KindName), Col("mean", KindDuration), Col("python", KindSource))
	// Each kernel's total over the occurrences, in their order, read
	// occurrence by occurrence (each one's kernels side by side).
	means := make([]float64, len(rep))
	for _, occ := range gr.occ {
		for i, g := range occ {
			means[i] += us(trace.Duration(cols.end[g] - cols.start[g]))
		}
	}
	for i, g := range rep {
		mean := means[i] / float64(len(gr.occ))
		op := ix.opLabel(g)
		ops = append(ops, op)
		if i == 0 || !ix.sameCall(rep[i-1], g) {
			callOps = append(callOps, op)
		}
		names = append(names, t.GPU[g].Name)
		tb.Add(Count(float64(i+1)), NameCell(ShortKernelName(t.GPU[g].Name)), NameCell(ix.category(g)), NameCell(op), DurUs(mean), SourceCell(ix.userLine(g)))
	}
	return tb, ops, callOps, names
}

// kernelsOfCalls says how many kernels a chain has, and from how many op
// calls where an op launched several.
func kernelsOfCalls(kernels, calls int) string {
	if calls == kernels {
		return fmt.Sprintf("%d kernels", kernels)
	}
	return fmt.Sprintf("%d kernels from %d op calls", kernels, calls)
}

// longestWhat names the work a fusion keeps at least: the longest kernel,
// or the longest op call's kernels where a call launched several.
func longestWhat(kernels, calls int) string {
	if calls == kernels {
		return "kernel"
	}
	return "op call's kernels"
}

// launchedBy says what launched a chain's kernels.
func launchedBy(kernels, calls int) string {
	if calls == kernels {
		return "each launched by its own op"
	}
	return fmt.Sprintf("launched by %d op calls (an op's own kernels, its implementation, stay as they are)", calls)
}

// What the trace says about torch.compile for a chain's code: nothing
// (untried), or compiled-slower found its compiled variant slower on the
// GPU, or slower on the host only.
const (
	compileUntried = iota
	compileGPUSlower
	compileHostSlower
)

// fusionFix says how to fuse in the user's framework: torch.compile for
// PyTorch, one hand-written kernel for a CUDA C program or where the trace
// measured torch.compile's variant of this code slower on the GPU (saying
// compile it would contradict compiled-slower), torch.compile in
// reduce-overhead mode where its variant was slower on the host only.
func fusionFix(t *trace.Trace, chain, where string, n int, backward bool, compiled int) string {
	switch compiled {
	case compileGPUSlower:
		return fmt.Sprintf("fuse %s in %s into one hand-written Triton or CUDA kernel that computes the whole chain per element, so the intermediates "+
			"stay in registers and %d launches become one; not torch.compile: its variant of this code ran slower on the GPU in this same trace (see compiled-slower)",
			chain, where, n)
	case compileHostSlower:
		return fmt.Sprintf("fuse %s in %s into one kernel, so the intermediates stay in registers and %d launches become one: torch.compile's variant of "+
			"this code in this same trace has faster kernels but more host time per call (see compiled-slower), so compile it with mode=\"reduce-overhead\" "+
			"(CUDA graphs) or as part of a larger region, or write the chain as a single Triton/CUDA kernel",
			chain, where, n)
	}
	if backward {
		return fmt.Sprintf("these kernels run in autograd's backward (%s), which eager PyTorch launches op by op: torch.compile the model "+
			"(AOTAutograd traces the backward and Inductor fuses it), so the %d launches and their intermediate tensors collapse into a few fused kernels",
			chain, n)
	}
	if t.Meta.CUDAProgram() {
		return fmt.Sprintf("fuse %s in %s into one CUDA kernel that computes the whole chain per element, so the intermediates stay in registers and %d launches become one",
			chain, where, n)
	}
	return fmt.Sprintf("fuse %s in %s into one kernel: wrap that function in torch.compile (Inductor generates one fused Triton kernel) or write it as a single Triton/CUDA kernel, so the intermediates stay in registers and %d launches become one",
		chain, where, n)
}

// titleChainWidth bounds the chain in a fusion title; the evidence and
// the Subject name the whole chain.
const titleChainWidth = 45

// titleChain names a chain in a finding title: the whole chain when it
// fits, else a repeated cycle's first and last ops, else the leading ops
// that fit.
func titleChain(chain string, ops []string) string {
	if utf8.RuneCountInString(chain) <= titleChainWidth || len(ops) < 2 {
		return ClipName(chain, titleChainWidth)
	}
	if strings.HasPrefix(chain, "(") {
		if i := strings.LastIndex(chain, ") ×"); i > 0 {
			cycle := strings.Split(chain[1:i], " → ")
			return ClipName(fmt.Sprintf("(%s → … → %s)%s", cycle[0], cycle[len(cycle)-1], chain[i+1:]), titleChainWidth)
		}
	}
	out := ClipName(ops[0], titleChainWidth-4)
	for _, op := range ops[1:] {
		if utf8.RuneCountInString(out+" → "+op+" → …") > titleChainWidth {
			break
		}
		out += " → " + op
	}
	return out + " → …"
}

// allBackward reports whether every op label names an autograd backward
// node ("AddmmBackward0").
func allBackward(ops []string) bool {
	for _, op := range ops {
		if !strings.Contains(op, "Backward") {
			return false
		}
	}
	return len(ops) > 0
}

// compactChain joins op labels with arrows, writing a chain that repeats a
// shorter cycle (three layers of the same four ops) as "(a → b) ×3".
func compactChain(ops []string) string {
	n := len(ops)
	for p := 2; p <= n/2; p++ { // a one-op cycle ("add → add") reads fine as is
		if n%p != 0 {
			continue
		}
		cycle := true
		for i := p; i < n && cycle; i++ {
			cycle = ops[i] == ops[i-p]
		}
		if cycle {
			return fmt.Sprintf("(%s) ×%d", strings.Join(ops[:p], " → "), n/p)
		}
	}
	return strings.Join(ops, " → ")
}

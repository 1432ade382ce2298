package analyze

import (
	"fmt"
	"slices"

	"github.com/tracelens/tracelens/trace"
)

// Thresholds of launch-bound.
const (
	// LaunchBoundMaxBusy is the GPU busy share of step time under which a
	// step may be launch bound.
	LaunchBoundMaxBusy = 0.5
	// LaunchBoundMinGapShare is the share of the GPU's idle time that must
	// sit in short gaps between launches (under LaunchGap) for launches,
	// not a long host wait, to be the cause.
	LaunchBoundMinGapShare = 0.5
	// LaunchBoundMinLaunches is the launches (and kernels) per step below
	// which launch overhead cannot matter.
	LaunchBoundMinLaunches = 20
)

// LaunchBound detects steps where the GPU waits for the CPU to issue work.
var LaunchBound = &Analyzer{
	Name: "launch-bound",
	Doc: fmt.Sprintf("Reports steps where the GPU is busy less than %.0f%% of the step (union of kernel, memcpy and memset intervals, "+
		"median over steps after the first), at least %.0f%% of its idle time lies in short gaps (< %s) between consecutive kernels, "+
		"and the host issues at least %d kernel launches per step: many short kernels, each costing the host (Python, dispatcher, "+
		"cudaLaunchKernel) more than it runs on the GPU. Not reported when the step's ledger has the host longer in syncs, "+
		"synchronous copies and device allocations and frees than in launches (those gaps are theirs, not launch overhead). Saving model: the idle "+
		"time in those short gaps, which replaying the step's launches as one CUDA graph (or fusing them into fewer kernels) removes, "+
		"at most the ledger's launch-overhead, framework-host and unexplained-idle lines.",
		LaunchBoundMaxBusy*100, LaunchBoundMinGapShare*100, LaunchGap, LaunchBoundMinLaunches),
	Requires: []*Analyzer{IdleGaps, Steps, Phases},
	Run:      runLaunchBound,
}

// LaunchBoundOptimizerShare is the share of a step's kernels in the
// optimizer step from which launch-bound's fix starts with a fused
// optimizer: a per-parameter loop's kernels are most of the launches.
const LaunchBoundOptimizerShare = 0.5

// launchPhases says where a step's kernels come from, once it has more
// than a forward pass, and launch-bound's fix: a fused optimizer first when
// the optimizer step launches most of them (a per-parameter loop's
// kernels: fused=True removes them without capturing the step).
func launchPhases(byPhase [3]float64) ([]Evidence, string) {
	fix := "issue fewer, larger kernels: capture the step in a CUDA graph (torch.cuda.CUDAGraph / torch.compile(mode=\"reduce-overhead\")), " +
		"or torch.compile the model so Inductor fuses the small kernels; batch more work per call if each kernel is tiny"
	if phasesWithKernels(byPhase) < 2 {
		return nil, fix
	}
	text := fmt.Sprintf("kernels per step by phase: forward %.0f, backward %.0f, optimizer %.0f", byPhase[forward], byPhase[backward], byPhase[optimizer])
	if total := byPhase[forward] + byPhase[backward] + byPhase[optimizer]; byPhase[optimizer] >= LaunchBoundOptimizerShare*total {
		text += fmt.Sprintf(" (%.0f%% in the optimizer step)", byPhase[optimizer]/total*100)
		fix = fmt.Sprintf("most launches (%.0f of %.0f kernels per step) are the optimizer step's: construct the optimizer with fused=True "+
			"first (one kernel per parameter group), then ", byPhase[optimizer], total) + fix
	}
	return []Evidence{{Text: text}}, fix
}

// allocHostUs is the median over the steady steps of the host time in
// device allocation and free calls (deviceAllocCall).
func (ix *index) allocHostUs(steps int) float64 {
	first := FirstSteady(steps)
	if steps-first <= 0 {
		return 0
	}
	per := make([]float64, steps)
	var kinds nameCache[string]
	for i := range ix.t.APICalls {
		c := &ix.t.APICalls[i]
		if st := int(ix.apiStep[i]); st >= first && kinds.get(c.Name, allocCallKind) != "" {
			per[st] += us(c.Dur())
		}
	}
	return median(per[first:])
}

// phasesWithKernels counts the phases with kernels.
func phasesWithKernels(n [3]float64) int {
	k := 0
	for _, v := range n {
		if v > 0 {
			k++
		}
	}
	return k
}

// kernelsByPhase counts the kernels launched in the steady steps per
// phase (forward, backward, optimizer), per step.
func (ix *index) kernelsByPhase(steps int) [3]float64 {
	var n [3]float64
	first := FirstSteady(steps)
	for g := range ix.t.GPU {
		if ix.t.GPU[g].Kind == trace.Kernel && int(ix.gpuStep[g]) >= first {
			n[ix.phase[g]]++
		}
	}
	for i := range n {
		n[i] /= float64(max(steps-first, 1))
	}
	return n
}

func runLaunchBound(p *Pass) ([]Finding, error) {
	r := p.Result
	steps := steadySteps(r)
	if len(steps) == 0 || len(p.ix.devices) == 0 {
		return nil, nil
	}
	wall := medianOf(steps, func(s *Step) float64 { return s.WallUs })
	busy := medianOf(steps, func(s *Step) float64 { return s.GPUBusyUs })
	gapIdle := medianOf(steps, func(s *Step) float64 { return s.LaunchGapIdleUs })
	launches := medianOf(steps, func(s *Step) float64 { return float64(s.Launches) })
	api := medianOf(steps, func(s *Step) float64 { return s.LaunchAPIUs })
	kernels := medianOf(steps, func(s *Step) float64 { return float64(s.Kernels) })
	ndev := float64(len(p.ix.devices))
	if wall <= 0 || launches < LaunchBoundMinLaunches || kernels < LaunchBoundMinLaunches {
		return nil, nil
	}
	share := busy / (wall * ndev)
	idle := wall*ndev - busy
	if share >= LaunchBoundMaxBusy || idle <= 0 || gapIdle < LaunchBoundMinGapShare*idle {
		return nil, nil
	}
	if l := r.StepStats.SteadyLedger; LedgerUs(l, LineHostSync)+p.ix.allocHostUs(len(r.Steps)) > LedgerUs(l, LineLaunch) {
		// The host waits in syncs, synchronous copies and device
		// allocations (cudaFree synchronizes the device) longer than it
		// launches: the gaps are theirs (host-sync's, the copy
		// analyzers', allocator-churn's business), not launch overhead.
		// alloc_conv: 814 µs a step in cudaMalloc/cudaFree against 183 µs
		// of launches, and the allocator fix is what delivered.
		return nil, nil
	}
	ls := r.Launches
	sev, conf := Medium, Medium
	if share < 0.25 {
		sev, conf = High, High
	}
	perLaunch := wall / launches
	phaseEv, fix := launchPhases(p.ix.kernelsByPhase(len(r.Steps)))
	ev := []Evidence{
		{Text: fmt.Sprintf("median step after the first: wall %s, GPU busy %s (%.0f%%), idle %s of which %s in gaps shorter than %s between kernels",
			fmtUs(wall), fmtUs(busy), share*100, fmtUs(idle), fmtUs(gapIdle), LaunchGap)},
		{Text: fmt.Sprintf("%.0f launches and %.0f kernels per step; launch API calls take %s per step (mean %s each); median queue delay %s (kernels start as soon as launched: the GPU waits for the host); %d of %d kernels (%.0f%%) run under %s",
			launches, kernels, fmtUs(api), fmtUs(ls.MeanAPIUs), fmtUs(ls.MedianQueueUs), ls.ShortKernels, r.Summary.KernelLaunches, ls.ShortKernelShare*100, ShortKernel)},
	}
	ev = append(ev, phaseEv...)
	ev = append(ev, Evidence{Text: "saving model: the idle time in short inter-kernel gaps per step, which a CUDA graph replay of the step (one launch) removes"})
	return []Finding{{
		Title: fmt.Sprintf("launch bound: GPU busy %.0f%% of the step, %.0f launches per step, one every %s",
			share*100, launches, fmtUs(perLaunch)),
		Subject:     "kernel launches",
		Severity:    sev,
		SavingUs:    gapIdle,
		SavingFrom:  FromLaunchGaps,
		LedgerLines: slices.Clone(launchLines),
		Measures: []Measure{
			{"median step", DurUs(wall)},
			{"GPU busy", Percent(share)},
			{"launches per step", Count(launches)},
			{"kernels per step", Count(kernels)},
			{"launch-gap idle per step", DurUs(gapIdle)},
			{"mean kernel time", DurUs(ls.MeanKernelUs)},
		},
		Evidence:   ev,
		Fix:        fix,
		Confidence: conf,
	}}, nil
}

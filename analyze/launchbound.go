package analyze

import (
	"fmt"
)

// Thresholds of launch-bound.
const (
	// LaunchBoundMaxBusy is the GPU busy share of step time under which a
	// step may be launch bound.
	LaunchBoundMaxBusy = 0.5
	// LaunchBoundMinAPIShare is the share of the GPU's idle time that the
	// host must spend inside launch calls for launches to be the cause.
	LaunchBoundMinAPIShare = 0.25
	// LaunchBoundMinLaunches is the launches per step below which launch
	// overhead cannot matter.
	LaunchBoundMinLaunches = 20
)

// LaunchBound detects steps where the GPU waits for the CPU to issue work.
var LaunchBound = &Analyzer{
	Name: "launch-bound",
	Doc: fmt.Sprintf("Reports steps where the GPU is busy less than %.0f%% of the step (union of kernel, memcpy and memset intervals, "+
		"median over steps after the first) while the host spends at least %.0f%% of the GPU's idle time inside kernel launch calls "+
		"(cudaLaunchKernel, cuLaunchKernel, ...) and issues at least %d launches per step: many short kernels, each costing more to launch "+
		"than to run. Saving model: the idle time the GPU would not spend if launches were batched (CUDA graphs replay a step with one "+
		"launch), bounded by the launch API time.",
		LaunchBoundMaxBusy*100, LaunchBoundMinAPIShare*100, LaunchBoundMinLaunches),
	Run: runLaunchBound,
}

func runLaunchBound(p *Pass) ([]Finding, error) {
	r := p.Result
	ss := r.StepStats
	wall, busy, launches, api := ss.MedianWallUsNoFirst, ss.MedianGPUBusyUsNoFirst, ss.MedianLaunchesNoFirst, ss.MedianLaunchAPIUsNoFirst
	ndev := float64(max(len(p.ix.devices), 1))
	if wall <= 0 || launches < LaunchBoundMinLaunches || len(p.ix.devices) == 0 {
		return nil, nil
	}
	share := busy / (wall * ndev)
	idle := wall*ndev - busy
	if share >= LaunchBoundMaxBusy || idle <= 0 || api < LaunchBoundMinAPIShare*idle {
		return nil, nil
	}
	saving := min(api, idle)
	ls := r.Launches
	sev := Medium
	if share < 0.25 {
		sev = High
	}
	f := Finding{
		Title: fmt.Sprintf("GPU busy %.0f%% of the step: %.0f launches per step, mean kernel %s, launch calls take %s of CPU per step",
			share*100, launches, fmtUs(ls.MeanKernelUs), fmtUs(api)),
		Severity: sev,
		SavingUs: saving,
		Evidence: []Evidence{
			{Text: fmt.Sprintf("median step (after the first): wall %s, GPU busy %s (%.0f%%), GPU idle %s", fmtUs(wall), fmtUs(busy), share*100, fmtUs(idle))},
			{Text: fmt.Sprintf("%.0f launches per step; launch API time %s per step (mean %s per call, median queue delay %s); %d of %d kernels (%.0f%%) run under %s",
				launches, fmtUs(api), fmtUs(ls.MeanAPIUs), fmtUs(ls.MedianQueueUs), ls.ShortKernels, r.Summary.KernelLaunches, ls.ShortKernelShare*100, ShortKernel)},
			{Text: "saving model: the GPU idle time per step that launch calls account for (min of launch API time and idle time); replaying the step as one CUDA graph removes it"},
		},
		Fix: "issue fewer, larger kernels: capture the step in a CUDA graph (torch.cuda.graphs / torch.compile(mode=\"reduce-overhead\")), " +
			"or torch.compile the model so Inductor fuses the small kernels; raise the batch size if the work per kernel is tiny",
		Confidence: High,
	}
	if share > 0.35 {
		f.Confidence = Medium
	}
	return []Finding{f}, nil
}

// fmtUs formats microseconds as a readable duration.
func fmtUs(v float64) string { return durUs(v).String() }

package analyze

import (
	"cmp"
	"slices"
	"strings"
)

// The figures in this file are ratios and comparisons the faces quote in
// prose (the spread of the step times, the first step against the others,
// how much of the idle time launch calls explain, which range costs the
// most, two implementations of the same GEMM). They are computed here, once,
// so that report, tui and diff only format them and cannot disagree.

// WarmUpRatio is the first step's time over the median of the others above
// which the first step carries warm-up worth leaving out when timing.
const WarmUpRatio = 1.2

// TopRangeLead is how many times the runner-up's GPU time the costliest
// record_function range must take to be named as the culprit: below it the
// ranges are nested or comparable.
const TopRangeLead = 1.5

// SameWorkGap is the throughput ratio between two implementations of one
// GEMM shape and dtype from which the roofline comparison is quoted.
const SameWorkGap = 1.2

// ComputeBoundShare is the compute share of the step (see
// StepStats.SteadyComputeShare) from which a rank's GPU, not its
// collectives, limits the step.
const ComputeBoundShare = 0.9

// maxSameWork bounds the same-work comparisons kept, in roofline order.
const maxSameWork = 3

// RangeLead is the record_function range with the most GPU time when it
// clearly leads the next one (by TopRangeLead or more).
type RangeLead struct {
	Name  string  `json:"name"`
	Count int     `json:"count"`
	GPUUs float64 `json:"gpu_us"`
	// Next is the range with the second most GPU time, NextGPUUs its GPU
	// time and Ratio GPUUs over NextGPUUs.
	Next      string  `json:"next"`
	NextGPUUs float64 `json:"next_gpu_us"`
	Ratio     float64 `json:"ratio"`
}

// SameWork compares the fastest and slowest implementations of one GEMM
// shape and dtype in the roofline (a library kernel against hand-written
// variants) when the fastest reaches SameWorkGap × the slowest's TFLOP/s.
type SameWork struct {
	Shape string `json:"shape"`
	DType string `json:"dtype"`
	// Fast and Slow are the ops; their TFLOP/s and efficiency (share of
	// the attainable peak) as in their roofline rows.
	Fast           string  `json:"fast"`
	FastTFLOPS     float64 `json:"fast_tflops"`
	FastEfficiency float64 `json:"fast_efficiency"`
	Slow           string  `json:"slow"`
	SlowTFLOPS     float64 `json:"slow_tflops"`
	SlowEfficiency float64 `json:"slow_efficiency"`
	// Speedup is FastTFLOPS over SlowTFLOPS.
	Speedup float64 `json:"speedup"`
}

// deriveFigures fills the derived step figures, Summary.GPUActivityUs,
// the kernels' cumulative shares, TopRange and SameWork from what metrics
// computed.
func deriveFigures(r *Result) {
	stepFigures(r)
	var all float64
	for _, c := range r.Categories {
		all += c.TotalUs
	}
	r.Summary.GPUActivityUs = all
	var cum float64
	for i := range r.Kernels {
		cum += r.Kernels[i].Share
		r.Kernels[i].CumulativeShare = min(cum, 1) // shares summed in order: rounding
	}
	r.TopRange = topRange(r.Annotations)
	r.SameWork = sameWork(r.Roofline)
	r.StepStats.Bottleneck = bottleneck(r)
}

// What limits the steady step (StepStats.Bottleneck).
const (
	// BottleneckHost: the GPU is busy less than LaunchBoundMaxBusy of
	// the step, waiting for the host (launches, Python, framework work,
	// syncs) the rest of it.
	BottleneckHost = "host"
	// BottleneckCommunication: the GPU is busy, but communication
	// kernels (alone, or waiting for other ranks) fill what compute
	// leaves of the step (compute under ComputeBoundShare).
	BottleneckCommunication = "communication"
	// BottleneckGPU: the GPU's own work fills the step.
	BottleneckGPU = "gpu"
	// BottleneckPeer: a rank of a run whose GPU is busy less than
	// LaunchBoundMaxBusy of the step and that spends most of the rest
	// waiting for a later peer rank (its ledger's peer_wait line): the
	// step is the slowest rank's, not this rank's host.
	BottleneckPeer = "peer"
)

// LimitedBy says, for a finding that saves GPU time but no step time,
// what keeps the step as long: "the host is the bottleneck" and so on,
// from Bottleneck.
func (ss *StepStats) LimitedBy() string {
	switch ss.Bottleneck {
	case BottleneckPeer:
		return "this rank waits for a peer rank"
	case BottleneckCommunication:
		return "communication is the bottleneck"
	case BottleneckGPU:
		return "other GPU work is the bottleneck"
	}
	return "the host is the bottleneck"
}

// bottleneck judges what limits the steady step, with the analyzers'
// thresholds (LaunchBoundMaxBusy, ComputeBoundShare): "" without steps
// or GPU activity.
func bottleneck(r *Result) string {
	ss := &r.StepStats
	switch {
	case !(ss.SteadyWallUs > 0) || r.Summary.KernelLaunches+r.Summary.Memcpys+r.Summary.Memsets == 0:
		return ""
	case ss.SteadyGPUBusyShare < LaunchBoundMaxBusy && 2*LedgerUs(ss.SteadyLedger, LinePeerWait) >= ss.SteadyWallUs*(1-ss.SteadyGPUBusyShare):
		return BottleneckPeer
	case ss.SteadyGPUBusyShare < LaunchBoundMaxBusy:
		return BottleneckHost
	case r.Summary.CommunicationUs > 0 && !ss.ComputeBound:
		return BottleneckCommunication
	}
	return BottleneckGPU
}

// stepFigures fills StepStats' table medians, extremes, spread, first-step
// ratio and steady-state shares.
func stepFigures(r *Result) {
	ss := &r.StepStats
	steps := r.Steps
	if len(steps) == 0 {
		return
	}
	ss.Median = medianStep(steps)
	ss.MedianNoFirst = ss.Median
	if len(steps) > 1 {
		ss.MedianNoFirst = medianStep(steps[1:])
	}
	lo, hi := steps[0], steps[0]
	for _, s := range steps[1:] {
		if s.WallUs < lo.WallUs {
			lo = s
		}
		if s.WallUs > hi.WallUs {
			hi = s
		}
	}
	ss.MinWallUs, ss.MinWallStep = lo.WallUs, lo.Number
	ss.MaxWallUs, ss.MaxWallStep = hi.WallUs, hi.Number
	if ss.MedianWallUs > 0 {
		ss.WallSpread = (hi.WallUs - lo.WallUs) / ss.MedianWallUs
	}
	// With two steps "the median of the others" is one step: too few to
	// call the first one slow.
	if len(steps) >= 3 && ss.MedianWallUsNoFirst > 0 {
		ss.FirstStepRatio = ss.FirstStepUs / ss.MedianWallUsNoFirst
		ss.WarmUp = ss.FirstStepRatio > WarmUpRatio
	}
	ss.SteadyGPUIdleShare = max(0, 1-min(ss.SteadyGPUBusyShare, 1))
	if ss.SteadyGPUIdleUs > 0 {
		// Launch calls run on the host while the GPU may be busy, so they
		// can take longer than the idle time: they explain all of it then.
		ss.SteadyLaunchAPIIdleShare = min(ss.SteadyLaunchAPIUs/ss.SteadyGPUIdleUs, 1)
	}
	ss.SteadyKernelUs = medianOf(steadySteps(r), func(s *Step) float64 { return s.KernelUs })
	if ss.SteadyLaunches > 0 {
		ss.SteadyLaunchAPIPerLaunchUs = ss.SteadyLaunchAPIUs / ss.SteadyLaunches
	}
	if ss.SteadyKernels > 0 {
		ss.SteadyKernelMeanUs = ss.SteadyKernelUs / ss.SteadyKernels
	}
	// Each steady step's busy share scaled by its compute part stays
	// within [0, 1] and within the busy share; the median of those.
	var shares []float64
	for _, s := range steadySteps(r) {
		if s.GPUBusyUs > 0 {
			shares = append(shares, s.GPUBusyShare*min(1, s.ComputeBusyUs/s.GPUBusyUs))
		}
	}
	ss.SteadyComputeShare = median(shares)
	ss.ComputeBound = ss.SteadyComputeShare >= ComputeBoundShare
	if tot := ss.MedianForwardUs + ss.MedianBackwardUs + ss.MedianOptimizerUs; tot > 0 {
		ss.ForwardShare = ss.MedianForwardUs / tot
		ss.BackwardShare = ss.MedianBackwardUs / tot
		ss.OptimizerShare = ss.MedianOptimizerUs / tot
	}
}

// medianStep returns the per-column medians of steps (Number, StartUs and
// Synthetic left zero); integer columns are rounded medians.
func medianStep(steps []Step) Step {
	col := func(f func(*Step) float64) float64 { return medianOf(steps, f) }
	round := func(f func(*Step) float64) int { return int(col(f) + 0.5) }
	return Step{
		WallUs:           col(func(s *Step) float64 { return s.WallUs }),
		HostWallUs:       col(func(s *Step) float64 { return s.HostWallUs }),
		GPUBusyUs:        col(func(s *Step) float64 { return s.GPUBusyUs }),
		GPUIdleUs:        col(func(s *Step) float64 { return s.GPUIdleUs }),
		GPUBusyShare:     col(func(s *Step) float64 { return s.GPUBusyShare }),
		ComputeBusyUs:    col(func(s *Step) float64 { return s.ComputeBusyUs }),
		CommunicationUs:  col(func(s *Step) float64 { return s.CommunicationUs }),
		LaunchGapIdleUs:  col(func(s *Step) float64 { return s.LaunchGapIdleUs }),
		LongGapIdleUs:    col(func(s *Step) float64 { return s.LongGapIdleUs }),
		IrreducibleGPUUs: col(func(s *Step) float64 { return s.IrreducibleGPUUs }),
		KernelUs:         col(func(s *Step) float64 { return s.KernelUs }),
		Kernels:          round(func(s *Step) float64 { return float64(s.Kernels) }),
		Memcpys:          round(func(s *Step) float64 { return float64(s.Memcpys) }),
		Launches:         round(func(s *Step) float64 { return float64(s.Launches) }),
		LaunchAPIUs:      col(func(s *Step) float64 { return s.LaunchAPIUs }),
		SyncUs:           col(func(s *Step) float64 { return s.SyncUs }),
		ForwardUs:        col(func(s *Step) float64 { return s.ForwardUs }),
		BackwardUs:       col(func(s *Step) float64 { return s.BackwardUs }),
		OptimizerUs:      col(func(s *Step) float64 { return s.OptimizerUs }),
		CPUOpUs:          col(func(s *Step) float64 { return s.CPUOpUs }),
	}
}

// topRange returns the record_function range with the most GPU time when
// it leads the next by TopRangeLead, nil when fewer than two ranges ran GPU
// work or none leads. ProcessGroupNCCL's own ranges (nccl:all_reduce,
// nccl:coalesced, ...) are not candidates: their kernels' time is mostly
// waiting for the other ranks, not work that range costs (a pipeline
// stage's nccl:coalesced "led" by 40× with its bubble).
func topRange(anns []AnnotationStat) *RangeLead {
	var ranges []AnnotationStat
	for _, a := range anns {
		if a.Kind == AnnotationRange && a.GPUUs > 0 && !strings.HasPrefix(a.Name, "nccl:") {
			ranges = append(ranges, a)
		}
	}
	if len(ranges) < 2 {
		return nil
	}
	slices.SortStableFunc(ranges, func(a, b AnnotationStat) int { return cmp.Compare(b.GPUUs, a.GPUUs) })
	a, b := ranges[0], ranges[1]
	if a.GPUUs < TopRangeLead*b.GPUUs {
		return nil
	}
	return &RangeLead{Name: a.Name, Count: a.Count, GPUUs: a.GPUUs, Next: b.Name, NextGPUUs: b.GPUUs, Ratio: a.GPUUs / b.GPUUs}
}

// sameWork groups roofline rows by shape and dtype and compares the
// fastest with the slowest op of each group, in the order the groups first
// appear; rows above the device's peak (which Run does not show) are left
// out.
func sameWork(rows []RooflineRow) []SameWork {
	type group struct{ best, worst RooflineRow }
	var keys []string
	groups := map[string]*group{}
	for _, r := range rows {
		if r.TFLOPS <= 0 || !withinPeak(r) {
			continue
		}
		k := r.Shape + "\x00" + r.DType
		g, ok := groups[k]
		if !ok {
			keys = append(keys, k)
			groups[k] = &group{r, r}
			continue
		}
		if r.TFLOPS > g.best.TFLOPS {
			g.best = r
		}
		if r.TFLOPS < g.worst.TFLOPS {
			g.worst = r
		}
	}
	out := []SameWork{}
	for _, k := range keys {
		g := groups[k]
		if g.best.Op == g.worst.Op || g.best.TFLOPS < SameWorkGap*g.worst.TFLOPS {
			continue
		}
		out = append(out, SameWork{Shape: g.best.Shape, DType: g.best.DType,
			Fast: g.best.Op, FastTFLOPS: g.best.TFLOPS, FastEfficiency: g.best.Efficiency,
			Slow: g.worst.Op, SlowTFLOPS: g.worst.TFLOPS, SlowEfficiency: g.worst.Efficiency,
			Speedup: g.best.TFLOPS / g.worst.TFLOPS})
		if len(out) == maxSameWork {
			break
		}
	}
	return out
}

// withinPeak reports whether a roofline row achieves no more than the
// device's peaks (when they are known): a row that does is not shown.
func withinPeak(row RooflineRow) bool {
	return !(row.PeakTFLOPS > 0 && !(row.TFLOPS <= row.PeakTFLOPS)) && !(row.PeakGBps > 0 && !(row.GBps <= row.PeakGBps))
}

// measuredSpeedup returns how many times faster the trace's fastest
// implementation of the GEMM work kernel does (Result.SameWork, where
// kernel is the slower side), or 0 when the trace measures none.
func measuredSpeedup(r *Result, kernel string) (float64, string) {
	for _, sw := range r.SameWork {
		if row, ok := rooflineRow(r.Roofline, sw.Slow, sw.Shape, sw.DType); ok && row.Kernel == kernel {
			return sw.Speedup, sw.Fast
		}
	}
	return 0, ""
}

package analyze

import (
	"slices"
	"sort"

	"github.com/tracelens/tracelens/trace"
)

// The profiler's own host cost per recorded event and recording option,
// fitted by least squares on host-bound steps of real traces whose
// untraced step time CUDA events measured (fixtures/recorded/expect/
// overhead.py): the host-bound sides of the issue-25 pairs (record_shapes),
// 5 issue-26 workloads recorded with with_stack as well, and two
// workloads profiled once with each option alone, with all three and with
// none, each in a fresh process (../options, capture_calib.py; the
// variants are what tell the options' costs apart): traced step minus
// untraced step ≈ ops × (OverheadPerOpUs + OverheadPerShapesOpUs with
// record_shapes) + OverheadPerFrameUs × Python frame events +
// OverheadPerMemoryEventUs × allocator events. The fit's residuals are
// large (RMS 1.7 ms a step on overheads of 0.03–25 ms, and the untraced
// step of one workload varies ±20 % from process to process; see
// ProfilerCost): the estimate is an order of magnitude, not a
// measurement.
const (
	// OverheadPerOpUs is the host cost of one recorded framework op or
	// record_function range with no recording option, in µs.
	OverheadPerOpUs = 4.25
	// OverheadPerShapesOpUs is what record_shapes adds to each recorded
	// op, in µs.
	OverheadPerShapesOpUs = 1.79
	// OverheadPerFrameUs is the host cost of one recorded Python frame
	// (with_stack), in µs.
	OverheadPerFrameUs = 0.69
	// OverheadPerMemoryEventUs is the host cost of one allocator event
	// (profile_memory), in µs.
	OverheadPerMemoryEventUs = 0.81
	// OverheadPerLoaderOpUs is the host cost of one op a DataLoader runs
	// in the training process (inside its enumerate(DataLoader)# ranges:
	// CPU-tensor ops that launch nothing on the GPU), in µs, record_shapes
	// included. Fitted on loader_feats and loader_conv (0.97–1.82 µs an
	// op against their untraced host time, fixtures/recorded/expect/
	// overhead_loader.py), a third to a sixth of a training step's op:
	// priced at OverheadPerOpUs, a loading process's 3075 ops cost more
	// than its whole step. Validated on loader_aug (recorded after the
	// fit: 1.69 µs an op measured).
	OverheadPerLoaderOpUs = 1.55
)

// ProfilerCost is the estimate of the profiler's own host work in the
// traced steps (Result.ProfilerCost), from the events recorded per step
// and OverheadPerOpUs/OverheadPerFrameUs.
type ProfilerCost struct {
	// OpsPerStep and FramesPerStep are the median ops (with
	// record_function ranges) and Python frames recorded per steady step.
	OpsPerStep    float64 `json:"ops_per_step"`
	FramesPerStep float64 `json:"frames_per_step"`
	// SteadyOverheadUs is the median of the steady steps' estimated
	// profiler host time.
	SteadyOverheadUs float64 `json:"steady_overhead_us"`
	// UntracedStepUs estimates the steady step time without the profiler:
	// each steady step's period less its overhead, but less by no more
	// than the host work the GPU waited on (exposedHostUs: overhead hidden
	// under GPU work costs nothing), the median over the steady steps.
	UntracedStepUs float64 `json:"untraced_step_us"`
	// HostFactor is the share of the steady host period left once the
	// overhead is taken out: what a host-side saving is scaled by for the
	// untraced program (Finding.UntracedSavingUs). 1 when nothing is
	// charged.
	HostFactor float64 `json:"host_factor"`
	// PerStepUs is each step's estimated overhead, in Steps order.
	PerStepUs []float64 `json:"per_step_us"`
	// UntracedPerStepUs is each step's period less its overhead, by no
	// more than the host work the GPU waited on, in Steps order: the
	// per-step samples behind UntracedStepUs, which diff tests.
	UntracedPerStepUs []float64 `json:"untraced_per_step_us"`
}

// sortedStarts returns the start times of n spans, sorted.
func sortedStarts(n int, start func(int) trace.Time) []trace.Time {
	v := make([]trace.Time, n)
	for i := range v {
		v[i] = start(i)
	}
	sortTimes(v)
	return v
}

// sortTimes sorts v. The model keeps ops and frames by (thread, start),
// so their starts are a few ascending runs, one per thread: those are
// merged (linear), other orders sorted.
func sortTimes(v []trace.Time) {
	var runs []int // start of each ascending run after the first
	for i := 1; i < len(v); i++ {
		if v[i] < v[i-1] {
			if runs = append(runs, i); len(runs) > 16 {
				slices.Sort(v)
				return
			}
		}
	}
	if len(runs) == 0 {
		return
	}
	bounds := append(append([]int{0}, runs...), len(v))
	buf := make([]trace.Time, len(v))
	for len(bounds) > 2 {
		// Merge neighbouring runs pairwise until one is left.
		next := []int{0}
		for k := 0; k+1 < len(bounds); k += 2 {
			lo, mid := bounds[k], bounds[k+1]
			hi := mid
			if k+2 < len(bounds) {
				hi = bounds[k+2]
			}
			mergeTimes(buf[lo:hi], v[lo:mid], v[mid:hi])
			next = append(next, hi)
		}
		copy(v, buf)
		bounds = next
	}
}

// mergeTimes merges the sorted a and b into dst (len(a)+len(b)).
func mergeTimes(dst, a, b []trace.Time) {
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		if b[j] < a[i] {
			dst[k] = b[j]
			j++
		} else {
			dst[k] = a[i]
			i++
		}
		k++
	}
	k += copy(dst[k:], a[i:])
	copy(dst[k:], b[j:])
}

// countIn counts the sorted times in [a, b).
func countIn(v []trace.Time, a, b trace.Time) int {
	lo := sort.Search(len(v), func(i int) bool { return v[i] >= a })
	hi := sort.Search(len(v), func(i int) bool { return v[i] >= b })
	return hi - lo
}

// estimateProfilerCost fills r.ProfilerCost from the events recorded in
// each step's host interval. It runs after the steps' periods are known.
func estimateProfilerCost(t *trace.Trace, r *Result, clock *profilerClock) {
	// The costs were fitted on torch.profiler traces: another profiler's
	// (JAX's, Nsight's) cost per event is unknown.
	if len(r.Steps) == 0 || len(r.Steps) != len(t.Steps) || t.Meta.Framework != "PyTorch" {
		return
	}
	c := ProfilerCost{PerStepUs: make([]float64, len(r.Steps)), UntracedPerStepUs: make([]float64, len(r.Steps))}
	// The untraced step still runs its GPU work and idles where its
	// blocking syncs make the GPU wait for the host (host-sync's untraced
	// refill): a floor under the step less its overhead, which takes the
	// profiler's cost out of host work a sync then waits out (sync_accum's
	// base read 3921 µs untraced against 4569 µs measured, and its fix,
	// −12 % in CUDA events, read +2.4 %).
	var syncs float64
	for _, f := range r.Findings {
		if f.ID == HostSync.Name {
			syncs += f.UntracedSavingUs
		}
	}
	ndev := 1.0
	if syncs > 0 && r.view != nil {
		ndev = float64(max(len(r.view.Devices()), 1))
	}
	var nOps, nFrames, untraced, factor []float64
	// The steps come in start order: cursors, not a search per list per
	// step from scratch.
	cur := clock.cursor()
	for i := range r.Steps {
		st, s := t.Steps[i], &r.Steps[i]
		end := st.End
		if i+1 < len(t.Steps) && t.Steps[i+1].Start > st.Start {
			end = t.Steps[i+1].Start
		}
		// The step's own annotation (ProfilerStep#N) starts at st.Start.
		no, nl, nf, nm := cur.counts(st.Start, end)
		o, f := float64(max(no-1, 0)), float64(nf)
		ov := min(cur.eventsIn(st.Start, end, o, float64(nl), f, float64(nm)), s.HostPeriodUs)
		c.PerStepUs[i] = ov
		c.UntracedPerStepUs[i] = max(s.PeriodUs-min(ov, exposedHostUs(s)), min(s.GPUBusyUs/ndev+syncs, s.PeriodUs))
		if i == 0 && len(r.Steps) > 1 {
			continue
		}
		nOps, nFrames = append(nOps, o+float64(nl)), append(nFrames, f)
		untraced = append(untraced, c.UntracedPerStepUs[i])
		if s.HostPeriodUs > 0 {
			factor = append(factor, (s.HostPeriodUs-ov)/s.HostPeriodUs)
		}
	}
	steady := c.PerStepUs
	if len(steady) > 1 {
		steady = steady[1:]
	}
	c.OpsPerStep, c.FramesPerStep = median(nOps), median(nFrames)
	c.SteadyOverheadUs, c.UntracedStepUs = median(slices.Clone(steady)), median(untraced)
	c.HostFactor = 1
	if len(factor) > 0 {
		c.HostFactor = median(factor)
	}
	r.ProfilerCost = &c
}

// untracedSavings sets UntracedSavingUs of every finding whose saving is
// host time (GPU idle while the host works): its traced saving times the
// share of the host period left once the profiler's overhead is out. It
// runs once the savings are final (after enforceInvariants).
func untracedSavings(r *Result) {
	c := r.ProfilerCost
	if c == nil || c.SteadyOverheadUs <= 0 {
		return
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		switch f.SavingFrom {
		case FromGPUIdle, FromHostWaits, FromLaunchGaps:
			// A model that priced the untraced program itself (host-sync's
			// refill and run-up) has set it already.
			if f.SavingUs > 0 && f.UntracedSavingUs == 0 {
				f.UntracedSavingUs = f.SavingUs * c.HostFactor
			}
		}
	}
}

// exposedHostLines are the ledger lines of GPU idle while the host runs
// code the profiler records: where its per-event cost lengthens a step.
// (A host blocked in a sync waits for the GPU, not for the profiler.)
var exposedHostLines = []string{LineDataLoading, LineProfiler, LineLaunch, LineFramework, LineIdle}

// exposedHostUs is the step's time in exposedHostLines.
func exposedHostUs(s *Step) float64 {
	var v float64
	for _, line := range exposedHostLines {
		v += LedgerUs(s.Ledger, line)
	}
	return v
}

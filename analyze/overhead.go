package analyze

import (
	"slices"
	"sort"

	"github.com/tracelens/tracelens/trace"
)

// The profiler's own host cost per recorded event, fitted by least squares
// on host-bound steps of real traces whose untraced step time CUDA events
// measured (fixtures/recorded/expect/overhead.py: the 21 host-bound sides
// of the issue-25 pairs with a steady untraced timing, recorded with
// record_shapes, and 5 issue-26 workloads recorded with with_stack as
// well): traced step minus untraced step ≈ OverheadPerOpUs × (ops and
// record_function ranges) + OverheadPerFrameUs × (Python frame events).
// The fit's residuals are large (RMS 0.76 ms a step on overheads of
// 0.03–25 ms; see
// ProfilerCost): the estimate is an order of magnitude, not a
// measurement. Allocator events (profile_memory) could not be told apart
// from the Python frames recorded with them and are not charged.
const (
	// OverheadPerOpUs is the host cost of one recorded framework op or
	// record_function range (record_shapes on), in µs.
	OverheadPerOpUs = 7.51
	// OverheadPerFrameUs is the host cost of one recorded Python frame
	// (with_stack), in µs.
	OverheadPerFrameUs = 0.58
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
	slices.Sort(v)
	return v
}

// countIn counts the sorted times in [a, b).
func countIn(v []trace.Time, a, b trace.Time) int {
	lo := sort.Search(len(v), func(i int) bool { return v[i] >= a })
	hi := sort.Search(len(v), func(i int) bool { return v[i] >= b })
	return hi - lo
}

// estimateProfilerCost fills r.ProfilerCost from the events recorded in
// each step's host interval. It runs after the steps' periods are known.
func estimateProfilerCost(t *trace.Trace, r *Result) {
	// The costs were fitted on torch.profiler traces: another profiler's
	// (JAX's, Nsight's) cost per event is unknown.
	if len(r.Steps) == 0 || len(r.Steps) != len(t.Steps) || t.Meta.Framework != "PyTorch" {
		return
	}
	ops := sortedStarts(len(t.Ops), func(i int) trace.Time { return t.Ops[i].Start })
	var host []trace.Time
	for i := range t.Annotations {
		if !t.Annotations[i].GPU {
			host = append(host, t.Annotations[i].Start)
		}
	}
	slices.Sort(host)
	frames := sortedStarts(len(t.Frames), func(i int) trace.Time { return t.Frames[i].Start })
	c := ProfilerCost{PerStepUs: make([]float64, len(r.Steps)), UntracedPerStepUs: make([]float64, len(r.Steps))}
	var nOps, nFrames, untraced, factor []float64
	for i := range r.Steps {
		st, s := t.Steps[i], &r.Steps[i]
		end := st.End
		if i+1 < len(t.Steps) && t.Steps[i+1].Start > st.Start {
			end = t.Steps[i+1].Start
		}
		// The step's own annotation (ProfilerStep#N) starts at st.Start.
		o := float64(countIn(ops, st.Start, end) + max(countIn(host, st.Start, end)-1, 0))
		f := float64(countIn(frames, st.Start, end))
		ov := min(OverheadPerOpUs*o+OverheadPerFrameUs*f, s.HostPeriodUs)
		c.PerStepUs[i] = ov
		c.UntracedPerStepUs[i] = s.PeriodUs - min(ov, exposedHostUs(s))
		if i == 0 && len(r.Steps) > 1 {
			continue
		}
		nOps, nFrames = append(nOps, o), append(nFrames, f)
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
			if f.SavingUs > 0 {
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

package analyze

import "github.com/tracelens/tracelens/trace"

// Which side of the pipeline sets a step's period (Step.PeriodBound).
const (
	// BoundGPU: the GPU period is the longer one. The host queues work
	// faster than the GPU runs it (a host-ahead run), so the user waits
	// on the GPU: the host's step boundaries would time the launches, and
	// the host's wall of a later step would include time queued behind
	// earlier steps' GPU work.
	BoundGPU = "gpu"
	// BoundHost: the host period is the longer one (or the step launched
	// no GPU work): the GPU waits for the host (a GPU-starved run), so
	// the host's step interval is the period.
	BoundHost = "host"
)

// stepPeriods fills each step's period and StepStats' steady periods.
//
// The host period of step n is the host's start of step n+1 minus its
// start of step n (the last step: its host interval). The GPU period is
// the start of the first GPU work step n+1 launched minus that of step
// n's (by correlation: the Steps fact gives GPU work to the step whose
// launch call started in it, whenever it runs); the last step's, or a
// step whose successor launched nothing, is the extent of its own GPU
// work. A step's period is the longer of the two: the rate at which the
// pipeline completes steps, as CUDA events around untraced steps measure
// it.
func (ix *index) stepPeriods(r *Result, works []stepWork) {
	t := ix.t
	n := len(t.Steps)
	for i := range n {
		s := &r.Steps[i]
		st, w := t.Steps[i], &works[i]
		host := st.Dur()
		if i+1 < n && t.Steps[i+1].Start > st.Start {
			host = trace.Duration(t.Steps[i+1].Start - st.Start)
		}
		var gpu trace.Duration
		switch {
		case !w.has:
		case i+1 < n && works[i+1].has && works[i+1].first > w.first:
			gpu = trace.Duration(works[i+1].first - w.first)
		default:
			gpu = trace.Duration(w.last - w.first)
		}
		s.HostPeriodUs, s.GPUPeriodUs = us(host), us(gpu)
		s.PeriodUs, s.PeriodBound = s.HostPeriodUs, BoundHost
		if s.GPUPeriodUs > s.HostPeriodUs {
			s.PeriodUs, s.PeriodBound = s.GPUPeriodUs, BoundGPU
		}
	}
	ss := &r.StepStats
	steps := steadySteps(r)
	ss.SteadyPeriodUs = medianOf(steps, func(s *Step) float64 { return s.PeriodUs })
	ss.SteadyHostPeriodUs = medianOf(steps, func(s *Step) float64 { return s.HostPeriodUs })
	ss.SteadyGPUPeriodUs = medianOf(steps, func(s *Step) float64 { return s.GPUPeriodUs })
	gpuBound := 0
	for i := range steps {
		if steps[i].PeriodBound == BoundGPU {
			gpuBound++
		}
	}
	ss.SteadyPeriodBound = BoundHost
	if len(steps) > 0 && 2*gpuBound > len(steps) {
		ss.SteadyPeriodBound = BoundGPU
	}
}

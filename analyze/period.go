package analyze

import (
	"fmt"

	"github.com/tracelens/tracelens/trace"
)

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
// launch call started in it, whenever it runs; work without a launch
// call, such as cuBLAS's workspace memsets, can run long before the
// step's queued work and is left out); the last step's, or a step whose
// successor launched nothing, is the extent of its own GPU work. A step's
// period is the longer of the two: the rate at which the pipeline
// completes steps, as CUDA events around untraced steps measure it.
func (ix *index) stepPeriods(r *Result, works []stepWork) {
	t := ix.t
	n := len(t.Steps)
	// Each step's first launched activity, found as its work was merged.
	first := func(i int) trace.Time { return works[i].launchedFirst }
	for i := range n {
		s := &r.Steps[i]
		st := t.Steps[i]
		host := st.Dur()
		if i+1 < n && t.Steps[i+1].Start > st.Start {
			host = trace.Duration(t.Steps[i+1].Start - st.Start)
		}
		var gpu trace.Duration
		switch {
		case !works[i].launched:
		case i+1 < n && works[i+1].launched && first(i+1) > first(i):
			gpu = trace.Duration(first(i+1) - first(i))
		case works[i].has:
			gpu = trace.Duration(works[i].last - first(i))
		}
		s.HostPeriodUs, s.GPUPeriodUs = us(host), us(gpu)
		s.PeriodUs, s.PeriodBound = s.HostPeriodUs, BoundHost
		if s.GPUPeriodUs > s.HostPeriodUs {
			s.PeriodUs, s.PeriodBound = s.GPUPeriodUs, BoundGPU
		}
	}
	ix.steadyPeriods(r)
}

// steadyPeriods fills StepStats' steady periods: medians over the steady
// steps, bound by the GPU when most of them are.
func (ix *index) steadyPeriods(r *Result) {
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

// checkPeriod verifies a step's period: the longer of its host and GPU
// periods, neither negative, and PeriodBound naming the longer.
func checkPeriod(s *Step) error {
	switch {
	case !(s.HostPeriodUs >= 0 && s.GPUPeriodUs >= 0):
		return fmt.Errorf("negative period: host %v µs, GPU %v µs", s.HostPeriodUs, s.GPUPeriodUs)
	case s.PeriodUs != max(s.HostPeriodUs, s.GPUPeriodUs):
		return fmt.Errorf("period %v µs is not the longer of host %v µs and GPU %v µs", s.PeriodUs, s.HostPeriodUs, s.GPUPeriodUs)
	case (s.PeriodBound == BoundGPU) != (s.GPUPeriodUs > s.HostPeriodUs):
		return fmt.Errorf("period bound %q for host %v µs and GPU %v µs", s.PeriodBound, s.HostPeriodUs, s.GPUPeriodUs)
	}
	return nil
}

package analyze

import "github.com/tracelens/tracelens/trace"

// untracedHostUs is step i's host period less the profiler's estimated
// host work in it: the host time the untraced program needs for the step.
func (c *profilerClock) untracedHostUs(t *trace.Trace, r *Result, i int) float64 {
	s := &r.Steps[i]
	end := t.Steps[i].End
	if i+1 < len(t.Steps) && t.Steps[i+1].Start > t.Steps[i].Start {
		end = t.Steps[i+1].Start
	}
	return max(s.HostPeriodUs-c.costUs(t.Steps[i].Start, end), 0)
}

// pipelineSavingUs is what a step gains when a fix removes hostCut of its
// host work and gpuCut of its GPU work and host and GPU then overlap
// freely (the host queues work ahead, as without syncs or blocking
// copies): a step takes the longer of its host and its GPU work, before
// and after the fix.
func pipelineSavingUs(hostUs, gpuUs, hostCut, gpuCut float64) float64 {
	return max(max(hostUs, gpuUs)-max(hostUs-hostCut, gpuUs-gpuCut), 0)
}

// stepsUntracedPipelineUs is the median over the steady steps of
// pipelineSavingUs for the untraced program: each step's host period less
// the profiler's host work (untracedHostUs) and its GPU busy time per
// device, with hostCut and gpuCut taken out per step. 0 without a clock
// or steps.
func stepsUntracedPipelineUs(t *trace.Trace, r *Result, clock *profilerClock, devices int, hostCut, gpuCut float64) float64 {
	if clock == nil || len(r.Steps) == 0 || len(r.Steps) != len(t.Steps) {
		return 0
	}
	var v []float64
	for i := FirstSteady(len(r.Steps)); i < len(r.Steps); i++ {
		v = append(v, pipelineSavingUs(clock.untracedHostUs(t, r, i), r.Steps[i].GPUBusyUs/float64(max(devices, 1)), hostCut, gpuCut))
	}
	return median(v)
}

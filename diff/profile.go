package diff

import (
	"github.com/tracelens/tracelens/analyze"
)

// profile is one run reduced to what Compare tests: samples per compared
// step for each summary metric, kernel and category.
type profile struct {
	side       Side
	metrics    map[string][]float64
	kernels    []*series
	categories []*series
}

// newProfile takes every per-step figure from the analysis: the summary
// metrics of each step, and each kernel's and category's time per step
// (attributed to steps by launch time, as analyze counts kernels per
// step). Nothing is re-derived from the trace, so diff and the other
// faces quote the same figures.
func newProfile(a *analyze.Result, keepWarmup bool) *profile {
	steps := a.Steps
	first := firstCompared(len(steps), keepWarmup)
	p := &profile{
		side: Side{Source: a.Source, Framework: a.Framework, Device: a.Device, Steps: len(steps),
			Samples: len(steps) - first, StepsSynthetic: a.Summary.StepsSynthetic, PeriodBound: a.StepStats.SteadyPeriodBound},
		metrics: map[string][]float64{},
	}
	if c := a.ProfilerCost; c != nil && len(c.UntracedPerStepUs) == len(steps) {
		p.metrics[UntracedStep] = c.UntracedPerStepUs[first:]
	}
	for _, s := range steps[first:] {
		p.metrics[StepTime] = append(p.metrics[StepTime], s.PeriodUs)
		p.metrics[HostPeriod] = append(p.metrics[HostPeriod], s.HostPeriodUs)
		p.metrics[GPUPeriod] = append(p.metrics[GPUPeriod], s.GPUPeriodUs)
		p.metrics[StepWall] = append(p.metrics[StepWall], s.WallUs)
		p.metrics[GPUBusy] = append(p.metrics[GPUBusy], s.GPUBusyUs)
		p.metrics[GPUIdle] = append(p.metrics[GPUIdle], s.GPUIdleUs)
		p.metrics[Launches] = append(p.metrics[Launches], float64(s.Launches))
		p.metrics[Kernels] = append(p.metrics[Kernels], float64(s.Kernels))
		p.metrics[LaunchAPI] = append(p.metrics[LaunchAPI], s.LaunchAPIUs)
		p.metrics[CPUOp] = append(p.metrics[CPUOp], s.CPUOpUs)
	}
	for _, k := range a.Kernels {
		if s := sampled(k.Name, k.Category, k.PerStep, first); s != nil {
			s.autotune = k.Autotune
			p.kernels = append(p.kernels, s)
		}
	}
	for _, c := range a.Categories {
		if s := sampled(c.Category, c.Category, c.PerStep, first); s != nil {
			p.categories = append(p.categories, s)
		}
	}
	return p
}

// addOccurrences gives each kernel series its launches' durations in the
// compared steps (kernelOccurrences), for the occurrence-level comparison
// of runs with too few steps for the per-step test.
func (p *profile) addOccurrences(a *analyze.Result, keepWarmup bool) {
	occ := kernelOccurrences(a, firstCompared(len(a.Steps), keepWarmup))
	for _, s := range p.kernels {
		s.occ = occ[kernelKey{s.name, s.autotune}]
	}
}

// sampled is the series of one kernel or category over the compared
// steps, or nil when it ran in none of them.
func sampled(name, category string, perStep []analyze.StepShare, first int) *series {
	if first > len(perStep) {
		first = len(perStep)
	}
	s := &series{name: name, category: category, perStep: make([]float64, len(perStep)-first)}
	for i, st := range perStep[first:] {
		s.perStep[i] = st.Us
		s.count += st.Count
		s.total += st.Us
	}
	if s.count == 0 {
		return nil
	}
	return s
}

// firstCompared is the index of the first step compared: the warm-up step
// 0 is left out when there are others, unless keepWarmup.
func firstCompared(steps int, keepWarmup bool) int {
	if !keepWarmup && steps > 1 {
		return 1
	}
	return 0
}

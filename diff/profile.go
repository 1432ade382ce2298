package diff

import (
	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/trace"
)

// profile is one run reduced to what Compare tests: samples per compared
// step for each summary metric, kernel and category.
type profile struct {
	side       Side
	metrics    map[string][]float64
	kernels    []*series
	categories []*series
}

// newProfile takes the summary metrics per step from the analysis and
// breaks GPU time down per step from the trace, attributing each activity
// to the step its launch call started in (its own start when it has no
// launch), as analyze attributes kernels to steps.
func newProfile(r Run, keepWarmup bool) *profile {
	t, a := r.Trace, r.Analysis
	steps := a.Steps
	first := 0
	if !keepWarmup && len(steps) > 1 {
		first = 1
	}
	p := &profile{
		side: Side{Source: a.Source, Framework: a.Framework, Device: a.Device, Steps: len(steps),
			Samples: len(steps) - first, StepsSynthetic: a.Summary.StepsSynthetic},
		metrics: map[string][]float64{},
	}
	if p.side.Source == "" {
		p.side.Source = t.Source
	}
	sampled := steps[first:]
	for _, s := range sampled {
		p.metrics[StepWall] = append(p.metrics[StepWall], s.WallUs)
		p.metrics[GPUBusy] = append(p.metrics[GPUBusy], s.GPUBusyUs)
		p.metrics[GPUIdle] = append(p.metrics[GPUIdle], s.GPUIdleUs)
		p.metrics[Launches] = append(p.metrics[Launches], float64(s.Launches))
		p.metrics[LaunchAPI] = append(p.metrics[LaunchAPI], s.LaunchAPIUs)
	}
	// slot maps a trace step index to its sample index, -1 when not compared.
	slot := func(step int) int {
		if step < first || step >= len(steps) {
			return -1
		}
		return step - first
	}
	n := len(sampled)

	cpu := make([]float64, n)
	for i := range t.Ops {
		op := &t.Ops[i]
		if op.Parent != trace.None {
			continue // nested time is already inside its top-level op
		}
		if s := slot(t.StepOf(op.Start)); s >= 0 {
			cpu[s] += op.Dur().Micros()
		}
	}
	p.metrics[CPUOp] = cpu

	kernelCat := map[string]string{}
	for _, k := range a.Kernels {
		kernelCat[k.Name] = k.Category
	}
	kernels, cats := map[string]*series{}, map[string]*series{}
	get := func(m map[string]*series, list *[]*series, name, cat string) *series {
		s := m[name]
		if s == nil {
			s = &series{name: name, category: cat, perStep: make([]float64, n)}
			m[name] = s
			*list = append(*list, s)
		}
		return s
	}
	for i := range t.GPU {
		g := &t.GPU[i]
		at := g.Start
		if g.Launch != trace.None {
			at = t.APICalls[g.Launch].Start
		}
		s := slot(t.StepOf(at))
		if s < 0 {
			continue
		}
		us := g.Dur().Micros()
		cat := analyze.CategoryOf(t, i)
		c := get(cats, &p.categories, cat, cat)
		c.perStep[s] += us
		c.count++
		c.total += us
		if g.Kind != trace.Kernel {
			continue
		}
		kc, ok := kernelCat[g.Name]
		if !ok {
			kc = cat
		}
		k := get(kernels, &p.kernels, g.Name, kc)
		k.perStep[s] += us
		k.count++
		k.total += us
	}
	return p
}

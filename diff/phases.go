package diff

import "github.com/tracelens/tracelens/analyze"

// Metric keys of the per-phase kernel time per step, in Result.Summary
// only when either run is a training trace (analyze.Result.HasPhaseSplit).
const (
	ForwardKernel   = "forward_us"
	BackwardKernel  = "backward_us"
	OptimizerKernel = "optimizer_us"
)

// phaseMetrics compares the forward / backward / optimizer kernel time of
// the compared steps like the other per-step figures (the first step left
// out unless keepWarmup), or returns nil for two inference runs, where
// the split says nothing.
func phaseMetrics(base, next *analyze.Result, keepWarmup bool, alpha float64) []Metric {
	if !base.HasPhaseSplit() && !next.HasPhaseSplit() {
		return nil
	}
	samples := func(a *analyze.Result, f func(analyze.Step) float64) []float64 {
		steps := a.Steps[firstCompared(len(a.Steps), keepWarmup):]
		v := make([]float64, len(steps))
		for i, s := range steps {
			v[i] = f(s)
		}
		return v
	}
	var out []Metric
	for _, p := range []struct {
		key, name string
		f         func(analyze.Step) float64
	}{
		{ForwardKernel, "forward kernel time", func(s analyze.Step) float64 { return s.ForwardUs }},
		{BackwardKernel, "backward kernel time", func(s analyze.Step) float64 { return s.BackwardUs }},
		{OptimizerKernel, "optimizer kernel time", func(s analyze.Step) float64 { return s.OptimizerUs }},
	} {
		out = append(out, Metric{Key: p.key, Name: p.name, Time: true,
			Delta: CompareSamples(samples(base, p.f), samples(next, p.f), alpha)})
	}
	return out
}

// jsonPhase (any optional metric: the phases, the untraced step) is a phase metric for the JSON summary, nil when absent.
func jsonPhase(r *Result, key string) *jsonMetric {
	if m := r.Metric(key); m != nil {
		j := toJSONMetric(m.Delta)
		return &j
	}
	return nil
}

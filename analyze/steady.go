package analyze

import "github.com/tracelens/tracelens/trace"

// Steady steps: the steps after the first (warm-up), whose medians are
// "the step", "GPU busy" and "per step" in every metric, finding and face.

// steadySteps returns the steps after the first (the first carries warm-up),
// or all steps when there is only one.
func steadySteps(r *Result) []Step { return r.Steps[FirstSteady(len(r.Steps)):] }

// FirstSteady is the index of the first steady-state step among n: the
// steps after the first (which carries warm-up), or the only one. It is
// the one definition of the steady state for per-activity loops, faces
// and steadySteps alike.
func FirstSteady(n int) int { return min(1, max(n-1, 0)) }

// medianOf returns the median of f over steps.
func medianOf(steps []Step, f func(*Step) float64) float64 {
	v := make([]float64, len(steps))
	for i := range steps {
		v[i] = f(&steps[i])
	}
	return median(v)
}

// steadyMedians returns the medians over the steady steps of a per-step
// time (µs), a per-step count and the steps' GPU busy time (µs): what an
// analyzer that sums its kernels per step compares with the step.
func steadyMedians(r *Result, time []trace.Duration, count []int) (timeUs, n, busyUs float64) {
	var ts, ns, busy []float64
	for i := FirstSteady(len(r.Steps)); i < len(r.Steps); i++ {
		ts = append(ts, us(time[i]))
		ns = append(ns, float64(count[i]))
		busy = append(busy, r.Steps[i].GPUBusyUs)
	}
	return median(ts), median(ns), median(busy)
}

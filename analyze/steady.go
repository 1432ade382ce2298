package analyze

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

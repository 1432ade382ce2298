package analyze

// HasPhaseSplit reports whether any step launched backward or optimizer
// kernels: only then is the forward / backward / optimizer split of a
// step's kernel time worth showing (an inference trace is all forward).
func (r *Result) HasPhaseSplit() bool {
	for _, s := range r.Steps {
		if s.BackwardUs > 0 || s.OptimizerUs > 0 {
			return true
		}
	}
	return false
}

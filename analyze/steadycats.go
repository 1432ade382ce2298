package analyze

import (
	"cmp"
	"slices"
)

// SteadyCategory is one kernel category's GPU time in the steady step:
// what the category takes per step once warm-up, compilation and
// torch.compile's autotuning are left out.
type SteadyCategory struct {
	Category string `json:"category"`
	// Us and Count are the mean GPU time and activities per steady step
	// (autotune launches excluded); Share is Us over all categories' Us.
	Us    float64 `json:"us"`
	Count float64 `json:"count"`
	Share float64 `json:"share"`
}

// steadyCategories fills StepStats.SteadyCategories from the activities
// the steady steps launched, autotune launches left out, by time
// descending.
func (ix *index) steadyCategories(r *Result) {
	t := ix.t
	first := FirstSteady(len(t.Steps))
	n := len(t.Steps) - first
	r.StepStats.SteadyCategories = []SteadyCategory{}
	if n <= 0 {
		return
	}
	byCat := map[string]*SteadyCategory{}
	var all float64
	for g := range t.GPU {
		st := int(ix.gpuStep[g])
		if st < first || ix.PhaseFacts.autotune != nil && ix.PhaseFacts.autotune[g] {
			continue
		}
		c := byCat[ix.category(g)]
		if c == nil {
			c = &SteadyCategory{Category: ix.category(g)}
			byCat[ix.category(g)] = c
		}
		d := us(t.GPU[g].Dur()) / float64(n)
		c.Us += d
		c.Count += 1 / float64(n)
		all += d
	}
	for _, cat := range categoryOrder {
		if c := byCat[cat]; c != nil {
			if all > 0 {
				c.Share = c.Us / all
			}
			r.StepStats.SteadyCategories = append(r.StepStats.SteadyCategories, *c)
		}
	}
	slices.SortStableFunc(r.StepStats.SteadyCategories, func(a, b SteadyCategory) int { return cmp.Compare(b.Us, a.Us) })
}

package analyze

// SplitJSON lets jsonout encode the result's per-step tables side by
// side with the rest (jsonout.Splitter): the steps, the ops, kernels,
// annotations and categories with their per-step rows are nine tenths of
// a long trace's report (6 of 6.2 MB on 2,205 steps), encoded on one
// thread after the analysis. whole is r, rest a copy of r without
// them, each encoding as null where its key is.
func (r *Result) SplitJSON() (whole, rest any, keys []string, values []any) {
	if r == nil {
		return r, nil, nil, nil
	}
	c := *r
	c.Steps, c.Ops, c.Kernels, c.Annotations, c.Categories = nil, nil, nil, nil, nil
	return r, &c, []string{"steps", "ops", "kernels", "annotations", "categories"},
		[]any{r.Steps, r.Ops, r.Kernels, r.Annotations, r.Categories}
}

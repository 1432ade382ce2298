// Package diff compares two profiling runs the way benchstat compares two
// benchmark runs: every metric is a set of samples (one per step), shown as
// a median ± spread per run, with the change in percent and the p-value of
// a Mann–Whitney U test, and "~" when the difference could be noise.
//
// Compare pairs up what two runs have in common (summary metrics per step,
// kernels by name and then by normalized name, kernel categories, ops,
// annotations and findings) and returns a Result that the writers in this
// package render as Markdown (for pull requests), text (for terminals) or
// JSON (for scripts), and that Gate checks for regressions in CI.
package diff

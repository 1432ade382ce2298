package diff

import "github.com/tracelens/tracelens/parallel"

// sideBySide returns each job's value, in the jobs' order, computing them
// side by side (parallel.Each). Each row of a comparison runs its own U
// test and minimum detectable change (a millisecond over 2,000 steps a
// side), and a big trace's tables have dozens of rows: one after another
// they were most of diff's time after the analyses.
func sideBySide[T any](jobs []func() T) []T {
	out := make([]T, len(jobs))
	parallel.Each(len(jobs), func(i int) { out[i] = jobs[i]() })
	return out
}

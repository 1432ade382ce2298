package diff

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// sideBySide returns each job's value, in the jobs' order, computing them
// on as many goroutines as there are cores. Each row of a comparison runs
// its own U test and minimum detectable change (a millisecond over 2,000
// steps a side), and a big trace's tables have dozens of rows: one after
// another they were most of diff's time after the analyses.
func sideBySide[T any](jobs []func() T) []T {
	out := make([]T, len(jobs))
	workers := min(runtime.GOMAXPROCS(0), len(jobs))
	if workers <= 1 {
		for i, job := range jobs {
			out[i] = job()
		}
		return out
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(jobs); i = int(next.Add(1) - 1) {
				out[i] = jobs[i]()
			}
		})
	}
	wg.Wait()
	return out
}

// Package parallel runs independent tasks on the machine's cores: the
// analysis's per-row and per-family work, and diff's per-row tests.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Each calls fn(i) for every i in [0, n), on as many goroutines as there
// are cores (GOMAXPROCS), each taking the next i when done: for a few
// tasks of very different sizes (a kernel row per name, where one name
// may have half the launches; a diff row's U test). On one core it calls
// them in order on the caller's goroutine. fn must only write what
// belongs to i.
func Each(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		})
	}
	wg.Wait()
}

package ingest

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// The passes after the last event (sorting checks, linking, nesting,
// Python parents) ran on one core: 130 ms of the 420 ms a 513 MB compile
// trace took on 16 cores, a third of the wall time. Those that touch every
// record in a way that splits (checking order, resolving parent ids) run
// over ranges of the records in parallel, and the nesting walk, which
// does not split, runs beside them.

// parallelRanges calls fn on ranges [lo, hi) that cover [0, n), at least
// minRange long, in up to workers goroutines, and returns when all have.
// A panic in fn (a bug) is raised again in the caller, where the reader's
// recover turns it into an error, instead of ending the process.
func parallelRanges(n, workers, minRange int, fn func(lo, hi int)) {
	parts := min(workers, n/max(minRange, 1))
	if parts <= 1 {
		fn(0, n)
		return
	}
	calls := make([]func(), parts)
	for i := range parts {
		lo, hi := n*i/parts, n*(i+1)/parts
		calls[i] = func() { fn(lo, hi) }
	}
	concurrently(calls...)
}

// eachParallel calls fn(i) for each i in [0, n), in up to workers
// goroutines that each take the next i when done with one: for work in
// pieces of uneven size (streams, permutation cycles).
func eachParallel(n, workers int, fn func(i int)) {
	var next atomic.Int64
	calls := make([]func(), max(1, min(workers, n)))
	for w := range calls {
		calls[w] = func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				fn(i)
			}
		}
	}
	concurrently(calls...)
}

// concurrently runs the calls in goroutines of their own (the first in the
// caller's) and waits for all; a panic in one is raised again here.
func concurrently(calls ...func()) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var panicked any
	run := func(call func()) {
		defer func() {
			if p := recover(); p != nil {
				mu.Lock()
				panicked = p
				mu.Unlock()
			}
		}()
		call()
	}
	for _, call := range calls[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(call)
		}()
	}
	run(calls[0])
	wg.Wait()
	if panicked != nil {
		panic(fmt.Sprintf("%v (in a parallel pass)", panicked))
	}
}

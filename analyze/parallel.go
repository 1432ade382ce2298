package analyze

import (
	"cmp"
	"runtime"
	"slices"
	"sync"
)

// minChunk is the fewest items a worker of inChunks takes: below it the
// goroutines cost more than the work.
const minChunk = 64

// inChunks calls fn over [0, n) split into contiguous chunks, one per
// available core at most, side by side, and returns when all are done.
// fn must only write what belongs to its own indices. Per-step work over
// thousands of steps (a step's ledger) is independent from step to step.
func inChunks(n int, fn func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), (n+minChunk-1)/minChunk)
	if workers <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	per := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += per {
		hi := min(lo+per, n)
		wg.Go(func() { fn(lo, hi) })
	}
	wg.Wait()
}

// mapChunks is inChunks for work that returns a value per chunk: the
// values in the chunks' order, whatever order they finished in.
func mapChunks[T any](n int, fn func(lo, hi int) T) []T {
	type part struct {
		lo int
		v  T
	}
	var mu sync.Mutex
	var parts []part
	inChunks(n, func(lo, hi int) {
		v := fn(lo, hi)
		mu.Lock()
		parts = append(parts, part{lo, v})
		mu.Unlock()
	})
	slices.SortFunc(parts, func(a, b part) int { return cmp.Compare(a.lo, b.lo) })
	out := make([]T, len(parts))
	for i := range parts {
		out[i] = parts[i].v
	}
	return out
}

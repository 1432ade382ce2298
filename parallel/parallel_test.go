package parallel

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// TestEachCallsEveryIndexOnce: on one core and on several, every index in
// [0, n) is called exactly once, and none outside it.
func TestEachCallsEveryIndexOnce(t *testing.T) {
	for _, procs := range []int{1, 4} {
		prev := runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 3, 1000} {
			calls := make([]atomic.Int32, n)
			Each(n, func(i int) { calls[i].Add(1) })
			for i := range calls {
				if c := calls[i].Load(); c != 1 {
					t.Errorf("%d cores, n %d: index %d called %d times", procs, n, i, c)
				}
			}
		}
		runtime.GOMAXPROCS(prev)
	}
}

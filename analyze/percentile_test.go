package analyze

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// TestPercentilesMatchSorted checks that percentiles, which selects
// instead of sorting, answers what Percentile over the sorted times does,
// on sizes from 1 up, with many equal times and in order and reversed.
func TestPercentilesMatchSorted(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 4, 5, 10, 19, 20, 21, 100, 1001, 5000} {
		for shape := range 5 {
			d := make([]trace.Duration, n)
			for i := range d {
				switch shape {
				case 0:
					d[i] = trace.Duration(r.Int64N(1e6))
				case 1:
					d[i] = trace.Duration(r.Int64N(3)) // mostly equal
				case 2:
					d[i] = trace.Duration(i)
				case 3:
					d[i] = trace.Duration(n - i)
				default:
					d[i] = 7
				}
			}
			sorted := slices.Sorted(slices.Values(d))
			got := percentiles(slices.Clone(d), 50, 95)
			want := []trace.Duration{Percentile(sorted, 50), Percentile(sorted, 95)}
			if !slices.Equal(got, want) {
				t.Errorf("n=%d shape %d: percentiles = %v, sorted = %v", n, shape, got, want)
			}
		}
	}
}

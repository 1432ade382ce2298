package analyze

import (
	"math"
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
	for _, n := range []int{1, 2, 3, 4, 5, 10, 19, 20, 21, 100, 1001, 5000, 20000} {
		for shape := range 7 {
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
				case 5: // a long tail, some negative, to the ends of int64
					d[i] = trace.Duration(r.NormFloat64()*1e4) << r.IntN(20)
					if i == 0 && n > 10 {
						d[i], d[1] = math.MaxInt64, math.MinInt64
					}
				case 6:
					d[i] = trace.Duration(math.Exp(r.NormFloat64()*2) * 1e4)
				default:
					d[i] = 7
				}
			}
			sorted := slices.Sorted(slices.Values(d))
			got := percentiles(slices.Clone(d), 0, 50, 95, 99.9, 100)
			want := []trace.Duration{Percentile(sorted, 0), Percentile(sorted, 50), Percentile(sorted, 95), Percentile(sorted, 99.9), Percentile(sorted, 100)}
			if !slices.Equal(got, want) {
				t.Errorf("n=%d shape %d: percentiles = %v, sorted = %v", n, shape, got, want)
			}
		}
	}
}

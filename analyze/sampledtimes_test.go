package analyze

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// TestSampledTimesMatchBinarySearch: in runs of every length about a
// stride's (sorted each, repeated times among them), the first time at
// or after any time, searched through the samples, is slices.
// BinarySearch's over the run; with a run out of order there are no
// samples and the search is that one.
func TestSampledTimesMatchBinarySearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var v []trace.Time
	var runs [][2]int
	for _, n := range []int{0, 1, 15, 16, 17, 31, 33, 200, 5} {
		lo := len(v)
		at := trace.Time(rng.IntN(100))
		for range n {
			at += trace.Time(rng.IntN(3))
			v = append(v, at)
		}
		runs = append(runs, [2]int{lo, len(v)})
	}
	check := func(s sampledTimes) {
		for _, r := range runs {
			for at := trace.Time(-1); at < 600; at++ {
				i, _ := slices.BinarySearch(v[r[0]:r[1]], at)
				if got := s.firstFrom(r[0], r[1], at); got != r[0]+i {
					t.Fatalf("run %v, at %d: %d through the samples, %d by a binary search", r, at, got, r[0]+i)
				}
			}
		}
	}
	s := newSampledTimes(v, runs)
	if s.every == nil {
		t.Fatal("sorted runs without samples")
	}
	check(s)
	v[runs[7][0]+3], v[runs[7][0]+4] = v[runs[7][0]+4]+1, v[runs[7][0]+3]
	if s := newSampledTimes(v, runs); s.every != nil {
		t.Fatal("a run out of order sampled")
	} else {
		check(s)
	}
}

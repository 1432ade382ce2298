package analyze

import (
	"slices"

	"github.com/tracelens/tracelens/trace"
)

// sampledTimes are times searched in runs that are each sorted (one per
// thread), with every timeStride-th time kept apart: a search looks
// there first (a small array that stays in the cache) and then among
// timeStride times, where a binary search over all of them missed the
// cache at most of its probes.
type sampledTimes struct {
	v     []trace.Time
	every []trace.Time // v[0], v[timeStride], ...; nil: search v alone
}

// timeStride is how many times one of sampledTimes.every stands for.
const timeStride = 16

// newSampledTimes returns v's samples, or none where a run of v (runs:
// their [lo, hi)) is not sorted: there the search is slices.BinarySearch
// over the run, whose answer on unsorted times the samples would not
// keep.
func newSampledTimes(v []trace.Time, runs [][2]int) sampledTimes {
	for _, r := range runs {
		if !slices.IsSorted(v[r[0]:r[1]]) {
			return sampledTimes{v: v}
		}
	}
	s := sampledTimes{v: v, every: make([]trace.Time, (len(v)+timeStride-1)/timeStride)}
	for k := range s.every {
		s.every[k] = v[k*timeStride]
	}
	return s
}

// firstFrom returns the first index in [lo, hi) (a run) whose time is at
// or after at, or hi: slices.BinarySearch's answer.
func (s sampledTimes) firstFrom(lo, hi int, at trace.Time) int {
	if s.every == nil {
		i, _ := slices.BinarySearch(s.v[lo:hi], at)
		return lo + i
	}
	// The samples at indexes in [lo, hi): the first at or after at, k,
	// bounds the answer above, the one before it below.
	ks, ke := (lo+timeStride-1)/timeStride, (hi+timeStride-1)/timeStride
	j, _ := slices.BinarySearch(s.every[ks:ke], at)
	k := ks + j
	from, to := lo, hi
	if k > ks {
		from = (k-1)*timeStride + 1
	}
	if k < ke {
		to = k * timeStride
	}
	i, _ := slices.BinarySearch(s.v[from:to], at)
	return from + i
}

package analyze

import (
	"math/bits"
	"slices"

	"github.com/tracelens/tracelens/trace"
)

// percentiles returns Percentile(sorted d, p) for each p of ps (ascending)
// without sorting d: each percentile reads two ranks of d, which a
// selection finds in linear time where a sort of a hundred thousand launch
// times took most of the launch metrics. It reorders d.
func percentiles(d []trace.Duration, ps ...float64) []trace.Duration {
	out := make([]trace.Duration, len(ps))
	if len(d) == 0 {
		return out
	}
	from := 0 // ranks below from are placed: d[from:] holds the rest
	for i, p := range ps {
		pos := p / 100 * float64(len(d)-1)
		lo := int(pos)
		if lo >= len(d)-1 {
			out[i] = slices.Max(d[from:])
			continue
		}
		if lo >= from { // else the last percentile placed rank lo
			selectRank(d[from:], lo-from)
			from = lo + 1
		}
		next := slices.Min(d[lo+1:])
		frac := pos - float64(lo)
		out[i] = d[lo] + trace.Duration(frac*float64(next-d[lo])+0.5)
	}
	return out
}

// selectRank reorders d so that d[k] is the value a sort would put there,
// with nothing greater before it and nothing smaller after it.
// Quickselect with three-way partitions (runs of equal times, such as
// zero queue delays, end it at once); past a depth of twice log2(n) it
// sorts what is left, so it never takes more than a sort.
func selectRank(d []trace.Duration, k int) {
	depth := 2 * bits.Len(uint(len(d)))
	for len(d) > 1 {
		if depth == 0 {
			slices.Sort(d)
			return
		}
		depth--
		pivot := medianOf3(d[0], d[len(d)/2], d[len(d)-1])
		lt, gt := partition3(d, pivot)
		switch {
		case k < lt:
			d = d[:lt]
		case k >= gt:
			d, k = d[gt:], k-gt
		default:
			return
		}
	}
}

// partition3 reorders d into values below pivot, d[:lt], equal to it,
// d[lt:gt], and above it, d[gt:].
func partition3(d []trace.Duration, pivot trace.Duration) (lt, gt int) {
	lt, i, gt := 0, 0, len(d)
	for i < gt {
		switch {
		case d[i] < pivot:
			d[lt], d[i] = d[i], d[lt]
			lt++
			i++
		case d[i] > pivot:
			gt--
			d[gt], d[i] = d[i], d[gt]
		default:
			i++
		}
	}
	return lt, gt
}

// medianOf3 returns the middle one of a, b and c.
func medianOf3(a, b, c trace.Duration) trace.Duration {
	return max(min(a, b), min(max(a, b), c))
}

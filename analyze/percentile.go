package analyze

import (
	"math/bits"
	"slices"

	"github.com/tracelens/tracelens/trace"
)

// percentiles returns Percentile(sorted d, p) for each p of ps (ascending)
// without sorting d: each percentile reads two ranks of d, which a
// histogram over the times finds in a few sequential passes where a sort
// of a hundred thousand launch times took most of the launch metrics. It
// may reorder d.
func percentiles(d []trace.Duration, ps ...float64) []trace.Duration {
	out := make([]trace.Duration, len(ps))
	if len(d) == 0 {
		return out
	}
	ranks := make([]int, 0, 2*len(ps))
	for _, p := range ps {
		lo := int(p / 100 * float64(len(d)-1))
		ranks = append(ranks, min(lo, len(d)-1), min(lo+1, len(d)-1))
	}
	v := rankValues(d, ranks)
	for i, p := range ps {
		pos := p / 100 * float64(len(d)-1)
		lo := int(pos)
		at, next := v[2*i], v[2*i+1]
		if lo >= len(d)-1 {
			out[i] = at
			continue
		}
		frac := pos - float64(lo)
		out[i] = at + trace.Duration(frac*float64(next-at)+0.5)
	}
	return out
}

// smallSelect is the size below which rankValues sorts: a histogram's
// buckets cost more to clear and walk than a sort of so few times.
const smallSelect = 1024

// rankValues returns, for each rank r of ranks, the time a sort of d
// would put at d[r]. Times are bucketed by a monotone key of their offset
// from the least one (timeKey: exact below 128, else the top seven
// bits), so one pass counts the buckets, the counts name each rank's
// bucket and its rank within it, and a second pass gathers only those
// buckets' times to select in: sequential reads where a quickselect's
// partitions swapped and mispredicted over all of d. It may reorder d.
func rankValues(d []trace.Duration, ranks []int) []trace.Duration {
	out := make([]trace.Duration, len(ranks))
	if len(d) < smallSelect {
		slices.Sort(d)
		for i, r := range ranks {
			out[i] = d[r]
		}
		return out
	}
	base := slices.Min(d)
	var counts [timeKeys]int32
	for _, x := range d {
		counts[timeKey(x, base)]++
	}
	// Each rank's bucket and its rank within the bucket; buckets below
	// exactKeys hold one time each (base plus the key), so need no
	// gather. slot numbers the buckets to gather from 1.
	var slot [timeKeys]int8
	var bufs [][]trace.Duration
	bucket, within := make([]int, len(ranks)), make([]int, len(ranks))
	for i, r := range ranks {
		below, b := 0, 0
		for ; below+int(counts[b]) <= r; b++ {
			below += int(counts[b])
		}
		bucket[i], within[i] = b, r-below
		if b < exactKeys {
			out[i] = base + trace.Duration(b)
		} else if slot[b] == 0 {
			bufs = append(bufs, make([]trace.Duration, 0, counts[b]))
			slot[b] = int8(len(bufs))
		}
	}
	if len(bufs) > 0 {
		for _, x := range d {
			if s := slot[timeKey(x, base)]; s > 0 {
				bufs[s-1] = append(bufs[s-1], x)
			}
		}
	}
	for i := range ranks {
		if b := bucket[i]; b >= exactKeys {
			g := bufs[slot[b]-1]
			selectRank(g, within[i])
			out[i] = g[within[i]]
		}
	}
	return out
}

const (
	// exactKeys are the keys of offsets below 128, one offset each.
	exactKeys = 128
	// timeKeys is one more than the greatest key, of a 64-bit offset.
	timeKeys = (64-7)*64 + 128
)

// timeKey is a key of x's offset from base that never decreases as x
// grows: the offset itself below 128, else its bit length and the six
// bits after its leading one (as a float's exponent and mantissa), so a
// bucket spans at most a 64th of its times' offset.
func timeKey(x, base trace.Duration) int {
	v := uint64(x) - uint64(base)
	n := bits.Len64(v)
	if n <= 7 {
		return int(v)
	}
	return (n-7)*64 + int(v>>(n-7))
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

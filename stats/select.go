package stats

import (
	"cmp"
	"slices"
)

// Kth returns the k-th smallest (1-based) of a large set of values that
// are only counted and listed, never stored: count(v) is how many are
// ≤ v, list(lo, hi) those in (lo, hi]; all lie in (lo, hi]. Counts at
// guessed and bisecting values (narrow) shrink the interval until at most
// limit values fall inside, which are then listed and sorted: the order
// statistics of the n·m pairwise differences or ratios of two samples in
// O((n+m)·log) memory.
func Kth(k int, lo, hi float64, limit int, count func(float64) int, list func(lo, hi float64) []float64) float64 {
	lo, hi, below, ok := narrow(k, lo, hi, limit, func(v float64) (int, int) {
		c := count(v)
		return c, c
	})
	if !ok {
		return hi
	}
	in := list(lo, hi)
	slices.Sort(in)
	return in[k-below-1]
}

// Weighted is one entry of a multiset listed for KthWeighted: the value V
// standing for N equal values. Samples full of ties (step times that
// repeat) make their n·m pairwise ratios a few values repeated millions
// of times; listed one by one they could never be narrowed below limit.
type Weighted struct {
	V float64
	N int
}

// KthWeighted is Kth of a multiset whose values come in entries of equal
// values: count(v) is how many values are ≤ v and in how many entries,
// list(lo, hi) the entries in (lo, hi]. The limit is on entries, so a
// million ties of one value cost one entry, not a million.
func KthWeighted(k int, lo, hi float64, limit int, count func(float64) (n, entries int), list func(lo, hi float64) []Weighted) float64 {
	lo, hi, below, ok := narrow(k, lo, hi, limit, count)
	if !ok {
		return hi
	}
	in := list(lo, hi)
	slices.SortFunc(in, func(a, b Weighted) int { return cmp.Compare(a.V, b.V) })
	for _, w := range in {
		if below += w.N; below >= k {
			return w.V
		}
	}
	return hi // not reached: count(hi) ≥ k, so the entries reach k
}

// narrow shrinks (lo, hi], keeping the k-th smallest inside, until at
// most limit entries lie in it; it returns the interval and how many
// values are ≤ lo, and false when (lo, hi] holds the one float hi (every
// candidate equals hi) before that.
//
// Bisection on the value alone took some twenty counts to narrow the
// ratios of two 2,700-step samples, most of them spent crossing the
// sparse tails. So a step first guesses where the k-th lies, as if the
// values in (lo, hi] were spread evenly, and counts just below and just
// above the guess (each a half of limit's share of the interval away):
// on smooth data the k-th falls between and a few steps suffice. When a
// guess does not halve the entries left, the next step bisects, so it
// never takes more than twice bisection's counts. Any probe keeps the
// k-th inside, so the answer is the same float whichever probes ran.
func narrow(k int, lo, hi float64, limit int, count func(float64) (n, entries int)) (float64, float64, int, bool) {
	r := bracket{k: k, lo: lo, hi: hi, count: count}
	r.atHi, r.entriesHi = count(hi)
	guess := true
	for r.entriesHi-r.entriesLo > limit {
		left := r.entriesHi - r.entriesLo
		if guess {
			span := r.hi - r.lo
			at := r.lo + span*(float64(k-r.atLo)-0.5)/float64(r.atHi-r.atLo)
			margin := span * float64(limit) / 2 / float64(left)
			r.probe(at - margin)
			r.probe(at + margin)
		} else if mid := r.lo + (r.hi-r.lo)/2; mid > r.lo && mid < r.hi {
			r.probe(mid)
		} else {
			return r.lo, r.hi, r.atLo, false
		}
		guess = !guess || (r.entriesHi-r.entriesLo)*2 <= left
	}
	return r.lo, r.hi, r.atLo, true
}

// bracket is narrow's interval (lo, hi] around the k-th smallest value,
// with the counts at its ends (values and entries ≤ lo, ≤ hi).
type bracket struct {
	k               int
	lo, hi          float64
	atLo, entriesLo int // none at first: all lie in (lo, hi]
	atHi, entriesHi int
	count           func(float64) (n, entries int)
}

// probe counts at v, inside the interval, and moves the end on v's side
// of the k-th to v; a v outside (lo, hi) is skipped.
func (r *bracket) probe(v float64) {
	if !(v > r.lo && v < r.hi) {
		return
	}
	if n, e := r.count(v); n >= r.k {
		r.hi, r.atHi, r.entriesHi = v, n, e
	} else {
		r.lo, r.atLo, r.entriesLo = v, n, e
	}
}

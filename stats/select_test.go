package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// weightedSample is up to 400 entries, of one value up to hundreds of
// times (more the later the trial), values rounded so several entries
// share one, and a quarter in a sparse tail; with the multiset written
// out and sorted.
func weightedSample(rng *rand.Rand, trial int) ([]Weighted, []float64) {
	entries := make([]Weighted, 1+rng.IntN(400))
	var all []float64
	for i := range entries {
		v := math.Round(1000*rng.NormFloat64()) / float64(1+trial%3*100)
		if rng.IntN(4) == 0 {
			v = 1e6 * rng.Float64()
		}
		entries[i] = Weighted{V: v, N: 1 + rng.IntN(1+trial%5*50)}
		for range entries[i].N {
			all = append(all, v)
		}
	}
	slices.Sort(all)
	return entries, all
}

// TestKthWeightedMatchesSorted checks the selection over counted entries
// against the multiset written out and sorted, for every k (some 500 of a
// large one), with entries of one value and many, equal values in
// several entries, and a limit small enough that the guesses and
// bisection both run.
func TestKthWeightedMatchesSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 60 {
		entries, all := weightedSample(rng, trial)
		count := func(v float64) (n, e int) {
			for _, w := range entries {
				if w.V <= v {
					n, e = n+w.N, e+1
				}
			}
			return n, e
		}
		list := func(lo, hi float64) []Weighted {
			var in []Weighted
			for _, w := range entries {
				if w.V > lo && w.V <= hi {
					in = append(in, w)
				}
			}
			return in
		}
		lo := math.Nextafter(all[0], math.Inf(-1))
		for k := 1; k <= len(all); k += max(1, len(all)/500) {
			if got := KthWeighted(k, lo, all[len(all)-1], 1+trial%8, count, list); got != all[k-1] {
				t.Fatalf("trial %d: %d-th of %d = %v, sorted %v", trial, k, len(all), got, all[k-1])
			}
		}
	}
}

// TestMannWhitneyUSortedMatches checks the merge ranking against
// MannWhitneyU's sort of the unsorted samples, bit for bit, on exact and
// approximate sizes, with ties within and across the samples, zeros of
// both signs and infinities.
func TestMannWhitneyUSortedMatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	gen := func(n, levels int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(rng.IntN(levels))
			switch rng.IntN(40) {
			case 0:
				v[i] = math.Copysign(0, -1)
			case 1:
				v[i] = math.Inf(1)
			case 2:
				v[i] = rng.Float64()
			}
		}
		return v
	}
	for trial := range 300 {
		levels := 1 + rng.IntN(60)
		x, y := gen(1+rng.IntN(1+trial%4*200), levels), gen(1+rng.IntN(20), levels)
		u, p := MannWhitneyU(x, y)
		xs, ys := slices.Clone(x), slices.Clone(y)
		slices.Sort(xs)
		slices.Sort(ys)
		if su, sp := MannWhitneyUSorted(xs, ys); su != u || math.Float64bits(sp) != math.Float64bits(p) {
			t.Fatalf("trial %d (%d+%d): sorted U, p = %v, %v; MannWhitneyU %v, %v", trial, len(x), len(y), su, sp, u, p)
		}
	}
	if u, p := MannWhitneyUSorted(nil, []float64{1}); u != 0 || p != 1 {
		t.Errorf("empty side: U, p = %v, %v; want 0, 1", u, p)
	}
}

package diff

import (
	"math"
	"math/rand/v2"
	"testing"
)

// benchSides are the per-step samples of one diff row at the size of two
// long traces (≈2,750 compared steps a side), in the two shapes diff
// meets: "spread", step times read to the nanosecond (µs with three
// decimals, so a few ties) around a median with a slow tail; "tied", a
// few repeated step times (a trace whose steps repeat a short pattern,
// like the copies pair), where nearly every crossing ties others.
func benchSides() map[string][2][]float64 {
	rng := rand.New(rand.NewPCG(7, 8))
	spread := func(n int, median float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			x := median * (1 + 0.03*rng.NormFloat64())
			if rng.IntN(50) == 0 {
				x *= 1.5 + rng.Float64() // the odd slow step
			}
			v[i] = math.Round(x*1000) / 1000
		}
		return v
	}
	tied := func(n int, levels []float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = levels[i%len(levels)]
		}
		return v
	}
	levels := []float64{1991.329, 2069.995, 2094.698, 2664.57, 10480.17}
	return map[string][2][]float64{
		"spread": {spread(2754, 180), spread(2741, 183)},
		"tied":   {tied(2754, levels), tied(2754, levels)},
	}
}

// BenchmarkCompareSamples times one diff row's statistics: summaries,
// the U test and the smallest detectable change.
func BenchmarkCompareSamples(b *testing.B) {
	for name, s := range benchSides() {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				CompareSamples(s[0], s[1], 0.05)
			}
		})
	}
}

// BenchmarkMinDetectablePct times the smallest detectable change alone,
// the part of a row that selects crossings.
func BenchmarkMinDetectablePct(b *testing.B) {
	for name, s := range benchSides() {
		d := Delta{Base: Summarize(s[0]), New: Summarize(s[1])}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				MinDetectablePct(d, 0.05)
			}
		})
	}
}

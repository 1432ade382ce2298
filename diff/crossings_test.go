package diff

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCrossingsMatchList checks the crossings selected without listing
// against the list MinDetectablePct used to build (every pair's b/n − 1,
// the rising side ascending, the falling side by |x| ascending), float
// for float, on samples with ties and zeros, small (listed at once) and
// large (narrowed by bisection first).
func TestCrossingsMatchList(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 40 {
		nb, nn := 1+rng.IntN(8), 1+rng.IntN(8)
		if trial%2 == 1 {
			nb, nn = 60+rng.IntN(80), 60+rng.IntN(80)
		}
		gen := func(n int) []float64 {
			v := make([]float64, n)
			for i := range v {
				switch rng.IntN(10) {
				case 0:
					v[i] = 0
				case 1:
					v[i] = 1 // ties at the median
				default:
					v[i] = 0.5 + rng.Float64()
				}
			}
			return v
		}
		rb, rn := gen(nb), gen(nn)
		var up, down []float64
		for _, vb := range rb {
			for _, vn := range rn {
				switch x := vb/vn - 1; {
				case x >= 0:
					up = append(up, x)
				case x > -1:
					down = append(down, -x)
				}
			}
		}
		slices.Sort(up)
		slices.Sort(down)
		c := newCrossings(rb, rn)
		if c.up() != len(up) || c.down() != len(down) {
			t.Fatalf("trial %d: %d up, %d down; the list has %d, %d", trial, c.up(), c.down(), len(up), len(down))
		}
		// Every point of a small list, about 150 of a large one (each
		// selection is a bisection over the pairs).
		step := func(n int) int { return max(1, n/150) }
		for i := 0; i < len(up); i += step(len(up)) {
			if got, want := c.upAt(i), up[i]; got != want && !(math.IsInf(got, 1) && math.IsInf(want, 1)) {
				t.Fatalf("trial %d: up[%d] = %v, list %v", trial, i, got, want)
			}
		}
		for i := 0; i < len(down); i += step(len(down)) {
			if got, want := c.downAt(i), down[i]; got != want {
				t.Fatalf("trial %d: down[%d] = %v, list %v", trial, i, got, want)
			}
		}
	}
}

// TestMinDetectableNormalMatchesScan checks the count search against
// the scan that runs the U test at each probed crossing, on large samples
// (the normal approximation) with ties within each side, zeros on both,
// a side with no zeros, and spreads from tight to wide.
func TestMinDetectableNormalMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 60 {
		nb, nn := 16+rng.IntN(300), 16+rng.IntN(300)
		spread := []float64{0.01, 0.2, 1}[trial%3]
		gen := func(n int, zeros bool) []float64 {
			v := make([]float64, n)
			for i := range v {
				switch rng.IntN(12) {
				case 0:
					if zeros {
						v[i] = 0
						continue
					}
					v[i] = 1
				case 1:
					v[i] = 1
				case 2:
					v[i] = 1 + spread/2 // a second tied group
				default:
					v[i] = 1 + spread*(rng.Float64()-0.5)
				}
			}
			return v
		}
		rb, rn := gen(nb, trial%4 != 0), gen(nn, trial%5 != 0)
		c := newCrossings(rb, rn)
		fast, ok := c.minDetectableNormal(rb, rn, 0.05)
		if !ok {
			t.Fatalf("trial %d: no count search on non-negative samples", trial)
		}
		slow := c.minDetectableScan(rb, rn, 0.05)
		if fast != slow && math.Abs(fast-slow) > 1e-9*math.Abs(slow) {
			t.Fatalf("trial %d (%d, %d values, spread %v): count search %v %%, scan %v %%", trial, nb, nn, spread, fast, slow)
		}
	}
	if _, ok := newCrossings([]float64{1}, []float64{1}).minDetectableNormal([]float64{-1, 1}, []float64{1}, 0.05); ok {
		t.Error("negative values took the count search")
	}
}

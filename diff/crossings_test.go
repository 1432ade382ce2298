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

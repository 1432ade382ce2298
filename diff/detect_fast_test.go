package diff

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

// sampleGen draws samples from the PCG stream's raw words alone, so the
// same seed gives the same samples whatever Go's derived methods do.
type sampleGen struct{ r *rand.PCG }

// intn is a draw in [0, n).
func (g sampleGen) intn(n int) int { return int(g.r.Uint64() % uint64(n)) }

// unit is a draw in [0, 1).
func (g sampleGen) unit() float64 { return float64(g.r.Uint64()>>11) / (1 << 53) }

// sample is n values in one of the shapes diff meets: a few repeated
// levels (every crossing tied many times over), values read to three
// decimals around a median with slow outliers, or either with zeros,
// plus now and then a negative value, which the count search declines.
func (g sampleGen) sample(n, shape int) []float64 {
	v := make([]float64, n)
	levels := []float64{1, 1.25, 2.5, 0.8, 1.0001}[:1+g.intn(5)]
	for i := range v {
		switch shape {
		case 0:
			v[i] = 100 * levels[g.intn(len(levels))]
		case 1:
			v[i] = math.Round(100000*(1+0.05*(g.unit()-0.5))) / 1000
		default:
			v[i] = math.Round(10*(1+2*g.unit())) / 10
		}
		if g.intn(30) == 0 {
			v[i] *= 1.5 + g.unit()
		}
		if shape == 2 && g.intn(8) == 0 {
			v[i] = 0
		}
	}
	if shape == 3 && n > 0 {
		v[g.intn(n)] = -1
	}
	return v
}

// detectCase is one random pair of samples: sizes from 0 to exact-test
// sizes to thousands, and now and then the same samples both sides
// (equal medians, the common case of a diff that changed nothing).
func detectCase(g sampleGen, trial int) (base, next []float64) {
	size := func() int {
		switch trial % 4 {
		case 0:
			return g.intn(9)
		case 1:
			return 4 + g.intn(14) // around stats.Exact's 30 in all
		case 2:
			return 16 + g.intn(300)
		}
		return 1000 + g.intn(2000)
	}
	shape := g.intn(4)
	base = g.sample(size(), shape)
	if g.intn(5) == 0 {
		return base, slices.Clone(base)
	}
	return base, g.sample(size(), shape)
}

var updateDetect = flag.Bool("update-detect", false, "rewrite testdata/detect_golden.json from the current CompareSamples")

// TestCompareSamplesGolden holds CompareSamples to what it gave before
// its statistics were made cheaper (sorting each sample once, ranking by
// merge, selecting crossings over distinct values with fewer counts): every
// float of every Delta bit for bit, on 120 random pairs of samples.
// testdata/detect_golden.json was written by the straightforward
// implementation (go test -run CompareSamplesGolden -update-detect at the
// commit before); rewrite it only for an intended change of the results.
func TestCompareSamplesGolden(t *testing.T) {
	g := sampleGen{rand.NewPCG(11, 12)}
	var got []string
	for trial := range 120 {
		base, next := detectCase(g, trial)
		d := CompareSamples(base, next, 0.05)
		bits := func(f float64) string { return fmt.Sprintf("%016x", math.Float64bits(f)) }
		got = append(got, fmt.Sprintf("%d %d/%d median %s %s spread %s %s pct %s p %s min %s sig %v note %q",
			trial, len(base), len(next), bits(d.Base.Median), bits(d.New.Median), bits(d.Base.Spread), bits(d.New.Spread),
			bits(d.Pct), bits(d.P), bits(d.MinDetectablePct), d.Significant, d.Note))
	}
	const path = "testdata/detect_golden.json"
	if *updateDetect {
		raw, err := json.MarshalIndent(got, "", "\t")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(raw, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(got) {
		t.Fatalf("%d cases, the golden file has %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("case differs:\n got %s\nwant %s", got[i], want[i])
		}
	}
}

// TestCrossingsKthMatchesList checks the selection over distinct values
// against the straightforward list of every pair's ratio b/n, sorted:
// the k-th for every k of a small list and some 300 of a large one, and
// the count at and just below each, on samples full of ties (a few
// levels), read to three decimals, with zeros, and tiny.
func TestCrossingsKthMatchesList(t *testing.T) {
	g := sampleGen{rand.NewPCG(13, 14)}
	for trial := range 80 {
		base, next := detectCase(g, trial%3) // up to 316 a side
		shift := 1 + 0.01*float64(g.intn(3))
		rb, rn := relative(base, 1), relative(next, shift)
		var all []float64
		for _, b := range rb {
			for _, n := range rn {
				if b > 0 && n > 0 {
					all = append(all, b/n)
				}
			}
		}
		slices.Sort(all)
		c := newCrossings(rb, rn)
		if c.finite != len(all) {
			t.Fatalf("trial %d: %d finite ratios, the list has %d", trial, c.finite, len(all))
		}
		for k := 1; k <= len(all); k += max(1, len(all)/300) {
			if got := c.kth(k); got != all[k-1] {
				t.Fatalf("trial %d (%d, %d values): ratio %d of %d = %v, list %v", trial, len(rb), len(rn), k, len(all), got, all[k-1])
			}
			v := all[k-1]
			for _, at := range []float64{v, math.Nextafter(v, 0)} {
				want, _ := slices.BinarySearch(all, math.Nextafter(at, math.Inf(1)))
				if got, _ := c.countLE(at); got != want {
					t.Fatalf("trial %d: %d ratios ≤ %v, list %d", trial, got, at, want)
				}
			}
		}
	}
}

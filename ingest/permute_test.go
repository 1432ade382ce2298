package ingest

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// TestPermuteParallel checks the parallel cycle moves against a copy
// through the permutation, for permutations of one long cycle, many short
// ones and a stable grouping, with cuts closer and farther than the cycles are long.
func TestPermuteParallel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 5000
	shuffled := r.Perm(n)
	oneCycle := make([]int, n) // i -> i+1 round: a single cycle of n
	for i := range oneCycle {
		oneCycle[i] = (i + 1) % n
	}
	swaps := make([]int, n) // pairs swapped: n/2 cycles of two
	for i := range swaps {
		swaps[i] = i ^ 1
	}
	grouped := make([]int, 0, n) // stable grouping of 7 interleaved groups
	for k := range 7 {
		for i := k; i < n; i += 7 {
			grouped = append(grouped, i)
		}
	}
	for name, p := range map[string][]int{"shuffled": shuffled, "one cycle": oneCycle, "swaps": swaps, "grouped": grouped} {
		for _, seg := range []int{1, 4, 64, 1 << 20} {
			g := make([]int, n)
			perm := make([]int32, n)
			want := make([]int, n)
			for i := range g {
				g[i] = i * 10
				perm[i] = int32(p[i])
				want[i] = p[i] * 10
			}
			permuteParallel(g, perm, 4, seg)
			if !slices.Equal(g, want) {
				t.Errorf("%s, a cut every %d: records not where the permutation puts them", name, seg)
			}
			for i, v := range perm {
				if v != int32(i) {
					t.Fatalf("%s, a cut every %d: perm[%d] = %d after, want the identity", name, seg, i, v)
				}
			}
		}
	}
}

// TestStreamOrderParts checks that streamOrder groups the same way
// however many ranges of the records it groups in parallel.
func TestStreamOrderParts(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	gpu := make([]trace.GPUActivity, 300_000)
	for i := range gpu {
		gpu[i].Device, gpu[i].Stream = int32(r.IntN(3)), int32(r.IntN(20))
	}
	one := &nsysReader{t: &trace.Trace{GPU: gpu}, workers: 1}
	wantPerm, wantBounds := one.streamOrder()
	four := &nsysReader{t: &trace.Trace{GPU: gpu}, workers: 4}
	perm, bounds := four.streamOrder()
	if !slices.Equal(perm, wantPerm) || !slices.Equal(bounds, wantBounds) {
		t.Fatalf("grouped in 4 ranges: %d groups, differently from one range (%d groups)", len(bounds)-1, len(wantBounds)-1)
	}
	for s := 0; s+1 < len(bounds); s++ {
		for _, i := range perm[bounds[s]+1 : bounds[s+1]] {
			if first := gpu[perm[bounds[s]]]; gpu[i].Device != first.Device || gpu[i].Stream != first.Stream {
				t.Fatalf("group %d mixes streams", s)
			}
		}
	}
}

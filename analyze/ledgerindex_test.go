package analyze

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// TestHostFilerBefore: the filer's window search from its last answer
// finds what a search from scratch does, for ends in order, out of order,
// on a start and between, over the whole index and a chunk of it.
func TestHostFilerBefore(t *testing.T) {
	starts := []trace.Time{0, 10, 10, 20, 35, 50, 50, 51, 80}
	rng := rand.New(rand.NewPCG(3, 4))
	var ends []trace.Time
	for at := trace.Time(-5); at < 90; at++ {
		ends = append(ends, at)
	}
	for range 300 {
		ends = append(ends, trace.Time(rng.IntN(95)-5))
	}
	for _, r := range [][2]int{{0, len(starts)}, {2, 7}, {4, 4}} {
		f := &hostFiler{li: &ledgerIndex{starts: starts}, lo: r[0], hi: r[1]}
		for _, end := range ends {
			k, _ := slices.BinarySearch(starts[r[0]:r[1]], end)
			if got := f.before(end); got != r[0]+k {
				t.Fatalf("windows %v: before(%d) = %d, want %d", r, end, got, r[0]+k)
			}
		}
	}
}

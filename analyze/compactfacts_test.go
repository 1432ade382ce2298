package analyze

import (
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// TestNameIDsPastTwoBytes: name ids past 65,535 move every id to 4
// bytes, those set before included.
func TestNameIDsPastTwoBytes(t *testing.T) {
	n := nameIDs{small: make([]uint16, 3)}
	n.set(0, 7)
	n.set(1, 1<<16)
	n.set(2, 65535)
	for g, want := range []int32{7, 1 << 16, 65535} {
		if got := n.at(g); got != want {
			t.Errorf("id %d: got %d, want %d", g, got, want)
		}
	}
}

// TestCriticalPastFourBytes: a critical time that does not fit 4 bytes
// (over 4.29 s) is kept exactly.
func TestCriticalPastFourBytes(t *testing.T) {
	c := &CriticalFacts{crit: make([]uint32, 3)}
	want := []trace.Duration{0, 5 * trace.Duration(1e9), trace.Duration(critOverflow) - 1}
	for g, d := range want {
		c.set(g, d)
	}
	for g, d := range want {
		if got := c.Of(g); got != d {
			t.Errorf("activity %d: got %d, want %d", g, got, d)
		}
	}
}

package analyze

import (
	"slices"

	"github.com/tracelens/tracelens/trace"
)

// peerWaitIn is the part of sp a rank spent waiting for a peer
// (Config.PeerWait, sorted and disjoint): the time a communication kernel
// spun in sp before the last rank of its collective arrived. 0 for a lone
// trace.
func (ix *index) peerWaitIn(sp trace.Span) trace.Duration {
	w := ix.peerWait
	i, _ := slices.BinarySearchFunc(w, sp.Start, func(s trace.Span, t trace.Time) int {
		switch {
		case s.End <= t:
			return -1
		case s.Start > t:
			return 1
		}
		return 0
	})
	var d trace.Duration
	for ; i < len(w) && w[i].Start < sp.End; i++ {
		if lo, hi := max(w[i].Start, sp.Start), min(w[i].End, sp.End); hi > lo {
			d += trace.Duration(hi - lo)
		}
	}
	return d
}

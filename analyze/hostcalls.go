package analyze

import (
	"github.com/tracelens/tracelens/trace"
)

// callColumns are the fields of the API calls (72 bytes each) that the
// critical path, the ownership index and the leaf work read, by call, in
// dense columns of the HostTable: each of the three streamed every call
// for a few of its fields, and two told the calls' names apart; the
// names are read here once, by address (nameCache).
type callColumns struct {
	start, end []trace.Time
	op, thread []trace.Index
	// kind is each call's callSync and callLaunch bits.
	kind []uint8
}

// The bits of callColumns.kind.
const (
	// callSync marks a call the host blocks in (IsSyncCall).
	callSync = 1 << iota
	// callLaunch marks a call that put work on a GPU stream
	// (isLaunchCall).
	callLaunch
)

// callNameKind is what a call's name alone says of its kind.
func callNameKind(name string) uint8 {
	var k uint8
	if IsSyncCall(name) {
		k |= callSync
	}
	if isLaunchCall(&trace.APICall{Span: trace.Span{Name: name}, FirstGPU: trace.None}) {
		k |= callLaunch
	}
	return k
}

// readCalls fills the calls' columns in chunks side by side.
func (h *hostTable) readCalls(t *trace.Trace) {
	n := len(t.APICalls)
	c := &h.calls
	c.start, c.end, c.op, c.thread, c.kind = make([]trace.Time, n), make([]trace.Time, n), make([]trace.Index, n), make([]trace.Index, n), make([]uint8, n)
	inChunks(n, func(lo, hi int) {
		var kinds nameCache[uint8]
		for i := lo; i < hi; i++ {
			a := &t.APICalls[i]
			k := kinds.get(a.Name, callNameKind)
			if a.FirstGPU != trace.None {
				k |= callLaunch
			}
			c.start[i], c.end[i], c.op[i], c.thread[i], c.kind[i] = a.Start, a.End, a.Op, a.Thread, k
		}
	})
}

// span returns call i's span (its name left out: what its columns hold).
func (c *callColumns) span(i trace.Index) trace.Span {
	return trace.Span{Start: c.start[i], End: c.end[i]}
}

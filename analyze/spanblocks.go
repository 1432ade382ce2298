package analyze

import (
	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/trace"
)

// spanBlockLen is how many consecutive intervals a spanBlocks entry sums up.
const spanBlockLen = 256

// spanBlocks sums up a family of host intervals (the API calls, ops or
// frames) in blocks of spanBlockLen consecutive ones: each block's
// earliest start and latest end. The ledger index files host work with
// one filer per run of step windows, side by side, and each filer looked
// at every interval of every family to find the few that touch its
// windows: with 16 cores, 16 reads of half a million frames. A filer now
// skips the blocks that cannot touch its windows, and reads the rest in
// the order it did.
type spanBlocks []interval.Bounds

// newSpanBlocks sums up the n intervals span returns (span(i) is the i-th).
func newSpanBlocks(n int, span func(i int) trace.Span) spanBlocks {
	b := make(spanBlocks, (n+spanBlockLen-1)/spanBlockLen)
	inChunks(len(b), func(lo, hi int) {
		for k := lo; k < hi; k++ {
			first := k * spanBlockLen
			s := span(first)
			sum := interval.Bounds{Start: s.Start, End: s.End}
			for i := first + 1; i < min(first+spanBlockLen, n); i++ {
				s := span(i)
				sum.Start, sum.End = min(sum.Start, s.Start), max(sum.End, s.End)
			}
			b[k] = sum
		}
	})
	return b
}

// runs calls fn with the runs of indices in [lo, hi), in order, of the
// blocks that may hold an interval ending after from and starting before
// to: every other interval there ends at or before from or starts at or
// after to, so it touches nothing in [from, to).
// Without blocks (nil), the run is [lo, hi).
func (b spanBlocks) runs(lo, hi int, from, to trace.Time, fn func(lo, hi int)) {
	if b == nil {
		if lo < hi {
			fn(lo, hi)
		}
		return
	}
	start := lo // the run being gathered, from start to the block at i
	for i := lo; i < hi; {
		next := min((i/spanBlockLen+1)*spanBlockLen, hi)
		if sum := b[i/spanBlockLen]; sum.End <= from || sum.Start >= to {
			if start < i {
				fn(start, i)
			}
			start = next
		}
		i = next
	}
	if start < hi {
		fn(start, hi)
	}
}

// hostBlocks are the spanBlocks of the host's API calls, ops and frames.
type hostBlocks struct {
	calls, ops, frames spanBlocks
}

// hostBlocks sums up ix's host families in blocks.
func (ix *index) hostBlocks() *hostBlocks {
	t := ix.t
	return &hostBlocks{
		calls:  newSpanBlocks(len(t.APICalls), func(i int) trace.Span { return t.APICalls[i].Span }),
		ops:    newSpanBlocks(len(t.Ops), func(i int) trace.Span { return t.Ops[i].Span }),
		frames: newSpanBlocks(len(t.Frames), func(i int) trace.Span { return t.Frames[i].Span }),
	}
}

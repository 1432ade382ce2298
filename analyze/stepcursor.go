package analyze

import (
	"cmp"
	"slices"
	"sort"

	"github.com/tracelens/tracelens/trace"
)

// stepCursor answers t.StepOf for times that mostly come in order (one
// thread's ops, the launch calls): from the last answer, a step on at
// most, without the binary search each of hundreds of thousands of ops
// paid over thousands of steps. The answers are StepOf's.
type stepCursor struct {
	t *trace.Trace
	// ordered says the steps' ends never fall, so the step a time is in
	// is bounded by the first step ending after it, one index StepOf's
	// search finds too; otherwise each time is StepOf's.
	ordered bool
	// next is that index for the last time asked.
	next int
}

func newStepCursor(t *trace.Trace) *stepCursor {
	ordered := slices.IsSortedFunc(t.Steps, func(a, b trace.Step) int { return cmp.Compare(a.End, b.End) })
	return &stepCursor{t: t, ordered: ordered}
}

// of returns t.StepOf(at).
func (c *stepCursor) of(at trace.Time) int {
	if !c.ordered {
		return c.t.StepOf(at)
	}
	s := c.t.Steps
	endsAfter := func(i int) bool { return i == len(s) || s[i].End > at }
	i := c.next
	switch {
	case (i == 0 || !endsAfter(i-1)) && endsAfter(i):
	case i < len(s) && !endsAfter(i) && endsAfter(i+1):
		i++
	default:
		i = sort.Search(len(s), func(m int) bool { return s[m].End > at })
	}
	c.next = i
	if i < len(s) && s[i].Start <= at {
		return i
	}
	return -1
}

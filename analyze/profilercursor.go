package analyze

import (
	"github.com/tracelens/tracelens/trace"
)

// seekCursor finds, in one sorted list of starts, the first at or after
// a time, for times that mostly come in ascending order (the steps', one
// after another): it gallops forward from the last answer, reading a few
// starts near it, where a binary search from scratch missed the cache at
// most probes. A time before the last one starts over from the list's
// head, so any order is answered right.
type seekCursor struct {
	pos  int        // the last answer: every start before it is below last
	last trace.Time // the last time asked
	set  bool       // a time was asked
}

// seek returns the first i in [0, n) with start(i) >= at (n if none);
// start must not decrease.
func (c *seekCursor) seek(n int, at trace.Time, start func(int) trace.Time) int {
	from := c.pos
	if at < c.last {
		from = 0
	}
	// Gallop: [lo, hi) holds the answer once start(hi) >= at or hi = n.
	lo, hi, step := from, from, 1
	for hi < n && start(hi) < at {
		lo = hi + 1
		hi = from + step
		step *= 2
	}
	hi = min(hi, n)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if start(h) < at {
			lo = h + 1
		} else {
			hi = h
		}
	}
	c.pos, c.last, c.set = lo, at, true
	return lo
}

// seekAfter is seek where the time may be the last one prev was asked
// (an interval starting where the one before ended, as steps do): then
// prev's answer, with no search.
func (c *seekCursor) seekAfter(prev *seekCursor, n int, at trace.Time, start func(int) trace.Time) int {
	if prev.set && prev.last == at {
		c.pos, c.last, c.set = prev.pos, at, true
		return c.pos
	}
	return c.seek(n, at, start)
}

// span returns the first starts at or after a and b, through cursors lo
// and hi: lo first, so that it may take hi's last answer.
func span(lo, hi *seekCursor, n int, a, b trace.Time, start func(int) trace.Time) (int, int) {
	i := lo.seekAfter(hi, n, a, start)
	return i, hi.seek(n, b, start)
}

// timesCursor counts a sorted list's times in intervals, one cursor for
// the intervals' starts and one for their ends.
type timesCursor struct {
	v      []trace.Time
	lo, hi seekCursor
}

// count returns the times in [a, b) (countIn's answer).
func (c *timesCursor) count(a, b trace.Time) int {
	lo, hi := span(&c.lo, &c.hi, len(c.v), a, b, func(i int) trace.Time { return c.v[i] })
	return hi - lo
}

// clockCursor answers profilerClock's counts and eventsIn for a run of
// intervals in ascending order (the steps'), the same as the clock does,
// with a cursor per list where the clock searched each from scratch.
type clockCursor struct {
	c                *profilerClock
	ops              []timesCursor
	loader, memory   timesCursor
	frames           timesCursor // when the frames are not sorted in place
	frameLo, frameHi seekCursor  // when they are: over frameEvery
	lastFrame        int         // the first frame at or after frameHi's last time
	leafLo, leafHi   seekCursor
}

// cursor returns a cursor over c's lists, its leaf work built.
func (c *profilerClock) cursor() *clockCursor {
	c.leafWorkIn(0, 0) // builds the leaf work
	k := &clockCursor{c: c, loader: timesCursor{v: c.loader}, memory: timesCursor{v: c.memory}, frames: timesCursor{v: c.frames}}
	for _, v := range c.ops {
		k.ops = append(k.ops, timesCursor{v: v})
	}
	return k
}

// counts is profilerClock.counts.
func (k *clockCursor) counts(a, b trace.Time) (ops, loader, frames, memory int) {
	for i := range k.ops {
		ops += k.ops[i].count(a, b)
	}
	if k.c.sortedFrames != nil {
		// Through the frames' samples (8 bytes each, together), then
		// among the few frames one stands for.
		every := k.c.frameEvery
		// Where the last interval ended at a, its answer there.
		from, abut := k.lastFrame, k.frameHi.set && k.frameHi.last == a
		lo, hi := span(&k.frameLo, &k.frameHi, len(every), a, b, func(i int) trace.Time { return every[i] })
		if !abut {
			from = k.c.frameFromSample(lo, a)
		}
		k.lastFrame = k.c.frameFromSample(hi, b)
		frames = k.lastFrame - from
	} else {
		frames = k.frames.count(a, b)
	}
	return ops, k.loader.count(a, b), frames, k.memory.count(a, b)
}

// eventsIn is profilerClock.eventsIn, its leaf work found by cursor.
func (k *clockCursor) eventsIn(a, b trace.Time, ops, loader, frames, memory float64) float64 {
	span := trace.Duration(b - a)
	outside := us(span - k.leafIn(a, b))
	recorded := min(k.c.perOpUs*ops+OverheadPerLoaderOpUs*loader+OverheadPerFrameUs*frames, outside)
	return min(recorded+OverheadPerMemoryEventUs*memory, us(span))
}

// leafIn is leafWork.in, its two searches by cursor.
func (k *clockCursor) leafIn(a, b trace.Time) trace.Duration {
	w := k.c.work
	if b <= a || len(w.spans) == 0 {
		return 0
	}
	lo, hi := span(&k.leafLo, &k.leafHi, len(w.spans), a, b, func(i int) trace.Time { return w.spans[i].Start })
	if lo > 0 && w.spans[lo-1].End > a {
		lo--
	}
	return w.clipped(lo, hi, a, b)
}

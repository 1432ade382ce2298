package analyze

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/trace"
)

// TestSeekCursorMatchesSearch checks the galloping cursor against a
// binary search, for times mostly ascending with some going back, over
// starts with long runs of equal times.
func TestSeekCursorMatchesSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 2, 7, 100, 5000} {
		v := make([]trace.Time, n)
		for i := 1; i < n; i++ {
			v[i] = v[i-1] + trace.Time(rng.IntN(3)*rng.IntN(40))
		}
		var c seekCursor
		at := trace.Time(-5)
		for range 2000 {
			if rng.IntN(10) == 0 {
				at -= trace.Time(rng.IntN(500)) // back
			} else {
				at += trace.Time(rng.IntN(60))
			}
			got := c.seek(len(v), at, func(i int) trace.Time { return v[i] })
			if want := sort.Search(n, func(i int) bool { return v[i] >= at }); got != want {
				t.Fatalf("n=%d: seek %d = %d, a search %d", n, at, got, want)
			}
		}
	}
}

// TestClockCursorMatchesClock checks that the cursor counts and prices
// steps one after another (and overlapping, and going back) as the
// clock does, with sorted frames in place and in a list of their own.
func TestClockCursorMatchesClock(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	times := func(n int) []trace.Time {
		v := make([]trace.Time, n)
		for i := range v {
			v[i] = trace.Time(rng.IntN(100000))
		}
		slices.Sort(v)
		return v
	}
	var leaves []interval.Bounds
	for at := trace.Time(0); at < 100000; at += trace.Time(rng.IntN(40)) + 1 {
		end := at + trace.Time(rng.IntN(30)) + 1
		leaves = append(leaves, interval.Bounds{Start: at, End: end})
		at = end
	}
	w := leafWorkOf(leaves, nil)
	frames := make([]trace.PyFrame, 3000)
	for i, at := range times(len(frames)) {
		frames[i].Start = at
	}
	every := make([]trace.Time, (len(frames)+frameStride-1)/frameStride)
	for k := range every {
		every[k] = frames[k*frameStride].Start
	}
	for _, inPlace := range []bool{false, true} {
		c := &profilerClock{perOpUs: 0.7, ops: startLists{times(20000), times(500)}, loader: times(300), memory: times(4000), work: &w}
		if inPlace {
			c.sortedFrames, c.frameEvery = frames, every
		} else {
			c.frames = times(3000)
		}
		k := c.cursor()
		a, b := trace.Time(-100), trace.Time(-100)
		for range 3000 {
			switch rng.IntN(15) {
			case 0:
				a -= trace.Time(rng.IntN(2000))
			case 1, 2, 3, 4, 5: // where the last one ended, as steps
				a = b
			default:
				a += trace.Time(rng.IntN(80))
			}
			b = a + trace.Time(rng.IntN(200)) - 10
			o, l, f, m := k.counts(a, b)
			wo, wl, wf, wm := c.counts(a, b)
			if o != wo || l != wl || f != wf || m != wm {
				t.Fatalf("in place %v: counts [%d, %d) = %d %d %d %d, the clock's %d %d %d %d", inPlace, a, b, o, l, f, m, wo, wl, wf, wm)
			}
			got, want := k.eventsIn(a, b, float64(o), float64(l), float64(f), float64(m)), c.eventsIn(a, b, float64(o), float64(l), float64(f), float64(m))
			if got != want {
				t.Fatalf("in place %v: eventsIn [%d, %d) = %v, the clock's %v", inPlace, a, b, got, want)
			}
		}
	}
}

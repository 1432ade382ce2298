package analyze

import (
	"math/rand/v2"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// runs hands a filer, in order, every interval of a range that touches
// its time range: checked against a plain walk on intervals of mixed
// lengths in a few threads' sorted orders, cut at random ranges.
func TestSpanBlocksRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var spans []trace.Span
	for thread := range 3 {
		at := trace.Time(thread * 50)
		for range 1000 + r.IntN(500) {
			at += trace.Time(r.IntN(20))
			d := trace.Time(r.IntN(30))
			if r.IntN(200) == 0 {
				d = 100000 // a frame around the whole loop
			}
			spans = append(spans, trace.Span{Start: at, End: at + d})
		}
	}
	b := newSpanBlocks(len(spans), func(i int) trace.Span { return spans[i] })
	touches := func(s trace.Span, from, to trace.Time) bool { return s.End > from && s.Start < to }
	for range 500 {
		lo := r.IntN(len(spans))
		hi := lo + r.IntN(len(spans)-lo+1)
		from := trace.Time(r.IntN(40000))
		to := from + trace.Time(r.IntN(3000))
		var want, got []int
		for i := lo; i < hi; i++ {
			if touches(spans[i], from, to) {
				want = append(want, i)
			}
		}
		last := lo
		b.runs(lo, hi, from, to, func(rlo, rhi int) {
			if rlo < last || rhi <= rlo || rhi > hi {
				t.Fatalf("run [%d, %d) after %d in [%d, %d)", rlo, rhi, last, lo, hi)
			}
			last = rhi
			for i := rlo; i < rhi; i++ {
				if touches(spans[i], from, to) {
					got = append(got, i)
				}
			}
		})
		if len(got) != len(want) {
			t.Fatalf("[%d, %d) × [%d, %d): %d intervals, want %d", lo, hi, from, to, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("[%d, %d) × [%d, %d): interval %d is %d, want %d", lo, hi, from, to, i, got[i], want[i])
			}
		}
	}
}

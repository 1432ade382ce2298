package interval

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

func sp(a, b trace.Time) trace.Span { return trace.Span{Start: a, End: b} }

func TestUnion(t *testing.T) {
	got := Union([]trace.Span{sp(5, 7), sp(0, 2), sp(1, 3), sp(3, 4), sp(9, 9), sp(6, 6)})
	want := []trace.Span{sp(0, 4), sp(5, 7), sp(9, 9)}
	if !slices.Equal(got, want) {
		t.Fatalf("Union = %v, want %v", got, want)
	}
	if n := NonEmpty([]trace.Span{sp(1, 1), sp(2, 3), sp(5, 4)}); !slices.Equal(n, []trace.Span{sp(2, 3)}) {
		t.Errorf("NonEmpty = %v", n)
	}
	if l := UnionLength([]trace.Span{sp(0, 10), sp(5, 15), sp(20, 21)}); l != 16 {
		t.Errorf("UnionLength = %d, want 16", l)
	}
}

func TestOverlap(t *testing.T) {
	u := []trace.Span{sp(0, 4), sp(5, 7), sp(10, 20)}
	for _, c := range []struct {
		w    trace.Span
		want trace.Duration
	}{{sp(2, 6), 3}, {sp(7, 10), 0}, {sp(-5, 30), 16}, {sp(12, 13), 1}} {
		if got := Overlap(u, c.w); got != c.want {
			t.Errorf("Overlap(%v) = %d, want %d", c.w, got, c.want)
		}
	}
	if w := Within(u, sp(3, 11)); !slices.Equal(w, []trace.Span{sp(3, 4), sp(5, 7), sp(10, 11)}) {
		t.Errorf("Within = %v", w)
	}
}

// TestBoundsOf: the bounds keep each span's times, in order, and drop
// only the name.
func TestBoundsOf(t *testing.T) {
	spans := []trace.Span{{Name: "a", Start: 1, End: 4}, {Start: 6, End: 6}}
	b := BoundsOf(spans)
	if len(b) != 2 || b[0] != (Bounds{1, 4}) || b[1] != (Bounds{6, 6}) || b[0].Dur() != 3 || b[0].Span() != (trace.Span{Start: 1, End: 4}) {
		t.Errorf("BoundsOf(%v) = %v", spans, b)
	}
}

// TestUnionBounds: the bounds' union is the spans' union, bound by bound.
func TestUnionBounds(t *testing.T) {
	spans := []trace.Span{sp(5, 7), sp(0, 2), sp(1, 3), sp(3, 4), sp(9, 9), sp(6, 6)}
	got := UnionBounds(BoundsOf(spans))
	if want := BoundsOf(Union(spans)); !slices.Equal(got, want) {
		t.Fatalf("UnionBounds = %v, want %v", got, want)
	}
}

// TestUnionBoundsInOrderOrNot: UnionBounds of bounds in start order
// (touching, nested, equal starts, points), merged without its sort, or
// shuffled, is Union's of the same intervals as spans.
func TestUnionBoundsInOrderOrNot(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for range 2000 {
		var bounds []Bounds
		at := trace.Time(0)
		for range rng.IntN(12) {
			at += trace.Time(rng.IntN(6))
			bounds = append(bounds, Bounds{Start: at, End: at + trace.Time(rng.IntN(9))})
		}
		if rng.IntN(4) == 0 {
			rng.Shuffle(len(bounds), func(i, j int) { bounds[i], bounds[j] = bounds[j], bounds[i] })
		}
		spans := make([]trace.Span, len(bounds))
		for i, b := range bounds {
			spans[i] = trace.Span{Start: b.Start, End: b.End}
		}
		var want []Bounds
		for _, s := range Union(spans) {
			want = append(want, Bounds{Start: s.Start, End: s.End})
		}
		if got := UnionBounds(slices.Clone(bounds)); !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Fatalf("union of %v: %v, want %v", bounds, got, want)
		}
	}
}

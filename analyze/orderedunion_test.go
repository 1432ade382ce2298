package analyze

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/trace"
)

// TestOrderedUnionMatchesSort: leaf ops and calls that come in start
// order (starts repeated, intervals empty, nested, touching) merge as
// they come into what gathering and sorting them gives, at 1, 3 and 8
// cores (chunks joined across their bounds); one out of order, at a
// chunk's bound or inside one, or one that ends before it starts, sends
// them to the sort.
func TestOrderedUnionMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	build := func(n int) (*trace.Trace, *spanColumns, []bool) {
		tr := &trace.Trace{}
		cols := &spanColumns{start: make([]trace.Time, n), end: make([]trace.Time, n)}
		parent := make([]bool, n)
		at, call := trace.Time(0), trace.Time(0)
		for i := range n {
			at += trace.Time(rng.IntN(4))                               // repeated starts
			cols.start[i], cols.end[i] = at, at+trace.Time(rng.IntN(6)) // some empty, some touching
			parent[i] = rng.IntN(5) == 0
			if !parent[i] && rng.IntN(2) == 0 {
				s := max(at+trace.Time(rng.IntN(3)), call)
				call = s
				tr.APICalls = append(tr.APICalls, trace.APICall{Span: trace.Span{Start: s, End: s + trace.Time(rng.IntN(3))}, Op: trace.Index(i)})
			} else if rng.IntN(4) == 0 {
				tr.APICalls = append(tr.APICalls, trace.APICall{Span: trace.Span{Start: -at, End: at + 50}, Op: trace.None}) // not in a leaf: not merged
			}
		}
		return tr, cols, parent
	}
	check := func(name string, tr *trace.Trace, cols *spanColumns, parent []bool, wantOrdered bool) {
		atCores([]int{1, 3, 8}, func(p int) {
			leaves, ok := orderedLeafUnion(cols, parent)
			calls, okCalls := orderedCallUnion(&newHostTable(tr).calls, parent)
			if ok != wantOrdered || okCalls != true {
				t.Fatalf("%s at %d cores: leaves ordered %v (want %v), calls ordered %v", name, p, ok, wantOrdered, okCalls)
			}
			if !ok {
				return
			}
			if want := interval.UnionBounds(leafBounds(cols, parent)); !slices.Equal(leaves, want) {
				t.Fatalf("%s at %d cores: %d leaf intervals merged in order, %d sorted", name, p, len(leaves), len(want))
			}
			if want := interval.UnionBounds(leafCallBounds(tr, parent)); !slices.Equal(calls, want) {
				t.Fatalf("%s at %d cores: %d call intervals merged in order, %d sorted", name, p, len(calls), len(want))
			}
		})
	}
	for _, n := range []int{0, 1, 5000} {
		tr, cols, parent := build(n)
		check("in order", tr, cols, parent, true)
	}
	tr, cols, parent := build(5000)
	for i := range parent {
		parent[i] = false
	}
	for _, at := range []int{2500, 1667, 1250, 17} { // a chunk's bound at 2 to 8 cores, inside one
		s := slices.Clone(cols.start)
		cols.start[at] = cols.start[at-1] - 1
		if cols.start[at] >= cols.start[at-1] {
			t.Fatal("the swap did not put a start out of order")
		}
		check("one out of order", tr, cols, parent, false)
		cols.start = s
	}
	e := cols.end[300]
	cols.end[300] = cols.start[300] - 1
	check("one ending before its start", tr, cols, parent, false)
	cols.end[300] = e
	check("restored", tr, cols, parent, true)
	// The calls out of order too.
	tr.APICalls[40].Start, tr.APICalls[40].End = -5, -4
	tr.APICalls[40].Op = 0
	if _, ok := orderedCallUnion(&newHostTable(tr).calls, parent); ok {
		t.Fatal("calls out of order merged as ordered")
	}
}

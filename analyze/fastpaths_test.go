package analyze

import (
	"cmp"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/trace"
)

// TestKernelNamesMatchRowByRow: the op names and user lines counted in
// GPU order (kernelNames), in one chunk or several summed, are those
// counted launch by launch of each row.
func TestKernelNamesMatchRowByRow(t *testing.T) {
	atCores([]int{1, 3, 8}, func(int) { testKernelNames(t) })
}

func testKernelNames(t *testing.T) {
	for _, name := range []string{"eggroll_hooks.json.gz", "recorded/compile_autotune_mlp.json.gz", "nanobragg_compile.json.gz"} {
		tr := load(t, name)
		ix := factsOf(t, tr)
		rows, _ := kernelTable(tr, ix.PhaseFacts.autotune)
		names, _ := ix.kernelNames(rows)
		counted := 0
		for r, row := range rows {
			ops, lines := map[string]int{}, map[string]int{}
			for _, g := range row.Launches {
				l := tr.GPU[g].Launch
				if l == trace.None {
					continue
				}
				if op := tr.APICalls[l].Op; op != trace.None {
					ops[tr.Ops[op].Name]++
				}
				if f := ix.userFrameOf(tr.APICalls[l].Frame); f != trace.None && tr.Frames[f].Name != "" {
					lines[tr.Frames[f].Name]++
				}
			}
			if got := names[r].ops.counts(); !maps.Equal(got, ops) {
				t.Fatalf("%s: row %s: ops %v, want %v", name, row.Name, got, ops)
			}
			if got := names[r].lines.counts(); !maps.Equal(got, lines) {
				t.Fatalf("%s: row %s: lines %v, want %v", name, row.Name, got, lines)
			}
			counted += len(ops) + len(lines)
		}
		if counted == 0 {
			t.Fatalf("%s: no names: the test would prove nothing", name)
		}
	}
}

// TestHostFilerCoverKeepsUnions: with intervals nested in the last one
// filed left out (hostFiler.cover), each window's union per source is
// the union of every interval's part in it (less the intervals that
// enclose it, for a source that does not keep those), over random
// windows and nested, overlapping and enclosing intervals.
func TestHostFilerCoverKeepsUnions(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 200 {
		var win []trace.Span
		for range 1 + rng.IntN(6) {
			s := trace.Time(rng.IntN(200))
			win = append(win, trace.Span{Start: s, End: s + 1 + trace.Time(rng.IntN(60))})
		}
		li := testLedgerIndex(win)
		f := &hostFiler{li: li, blocks: &hostBlocks{}, host: li.host, lo: 0, hi: len(win), from: li.starts[0], to: li.reach[len(win)-1], parts: 1}
		var filed [nSources][]trace.Span
		for _, src := range []ledgerSource{srcSync, srcFramework} {
			for _, s := range nestedSpans(rng) {
				f.add(src, s)
				filed[src] = append(filed[src], s)
			}
		}
		for wi, w := range win {
			for _, src := range []ledgerSource{srcSync, srcFramework} {
				var want []interval.Bounds
				for _, s := range filed[src] {
					if s.End <= s.Start || s.Start >= w.End || s.End <= w.Start || s.Start <= w.Start && s.End >= w.End && !keepsEnclosing(src) {
						continue
					}
					want = append(want, interval.Bounds{Start: max(s.Start, w.Start), End: min(s.End, w.End)})
				}
				var got []interval.Bounds
				if li.host[wi] != nil {
					got = slices.Clone(li.host[wi][src])
				}
				if g, w := interval.UnionBounds(got), interval.UnionBounds(want); !slices.Equal(g, w) {
					t.Fatalf("round %d, window %v, source %d: union %v, want %v", round, win[wi], src, g, w)
				}
			}
		}
	}
}

// testLedgerIndex is a ledger index over windows win with no host
// interval filed yet (the windows' part of newLedgerIndex).
func testLedgerIndex(win []trace.Span) *ledgerIndex {
	li := &ledgerIndex{win: win, host: make([]*[nSources][]interval.Bounds, len(win))}
	for i := range win {
		li.order = append(li.order, i)
	}
	slices.SortStableFunc(li.order, func(a, b int) int { return cmp.Compare(win[a].Start, win[b].Start) })
	for i, w := range li.order {
		li.starts = append(li.starts, win[w].Start)
		li.reach = append(li.reach, win[w].End)
		if i > 0 {
			li.reach[i] = max(li.reach[i], li.reach[i-1])
		}
	}
	return li
}

// nestedSpans returns intervals in start order, each nested in, after or
// overlapping the one before, as a thread's frames and ops come.
func nestedSpans(rng *rand.Rand) []trace.Span {
	var out []trace.Span
	at := trace.Time(rng.IntN(20))
	for range 3 + rng.IntN(25) {
		s := trace.Span{Start: at, End: at + trace.Time(rng.IntN(80))}
		if n := len(out); n > 0 && rng.IntN(2) == 0 {
			p := out[n-1] // nested in the last one, or at its start
			s.Start = max(p.Start, at)
			s.End = s.Start + trace.Time(rng.IntN(int(max(p.End-s.Start, 0))+1))
		}
		out = append(out, s)
		at = s.Start + trace.Time(rng.IntN(15))
	}
	return out
}

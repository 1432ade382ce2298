package analyze

import (
	"slices"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// TestStepSegsRoundTrip checks that the packed ledger intervals decode to
// what was packed, line by line, negative and zero times included.
func TestStepSegsRoundTrip(t *testing.T) {
	in := map[string][]trace.Span{
		LineGPUCompute: {{Start: -5, End: 0}, {Start: 0, End: 7}, {Start: 1 << 40, End: 1<<40 + 3}},
		LineIdle:       {{Start: 3, End: 4}},
		LineLaunch:     {{Start: 100, End: 90}},
	}
	var segs [nLedgerLines][]trace.Span
	for k, line := range ledgerLineOrder {
		segs[k] = in[line]
	}
	var scratch []byte
	s := encodeSegs(&segs, &scratch, &segArena{})
	for _, line := range LedgerLines() {
		if got := s.line(line); !slices.Equal(got, in[line]) || (got == nil) != (in[line] == nil) {
			t.Errorf("%s: got %v, want %v", line, got, in[line])
		}
	}
	if got := s.line("no such line"); got != nil {
		t.Errorf("unknown line: %v", got)
	}
}

// TestSegArenaKeepsExactCopies checks that the arena's copies hold what
// was kept, have no spare capacity (an append to one must not overwrite
// the next), and survive later keeps, small and large.
func TestSegArenaKeepsExactCopies(t *testing.T) {
	var a segArena
	var kept, want [][]byte
	for i := range 3000 {
		b := make([]byte, (i*37)%500+1)
		if i%1000 == 999 {
			b = make([]byte, segArenaBlock/2)
		}
		for j := range b {
			b[j] = byte(i + j)
		}
		c := a.keep(b)
		if cap(c) != len(c) {
			t.Fatalf("keep %d: cap %d, len %d", i, cap(c), len(c))
		}
		kept, want = append(kept, c), append(want, slices.Clone(b))
		clear(b)
	}
	for i := range kept {
		if !slices.Equal(kept[i], want[i]) {
			t.Fatalf("copy %d changed", i)
		}
	}
}

package analyze

import (
	"encoding/binary"
	"slices"

	"github.com/tracelens/tracelens/trace"
)

// ledgerLineOrder is LedgerLines, built once: a line's position in it is
// its slot in stepSegs.
var ledgerLineOrder = LedgerLines()

// nLedgerLines is len(LedgerLines()).
const nLedgerLines = 13

// stepSegs holds one step's ledger intervals, every line's in one byte
// slice: per interval, its start less the previous interval's end (the
// first's less zero) and its length, as varints. A step's intervals are
// as many as its kernels and gaps, and the Result keeps them for every
// step while only an export reads them: as []trace.Span (32 bytes each)
// they were the analysis's largest live set, 94 MB at 1 M kernels, where
// the deltas take a few bytes (issue 27).
type stepSegs struct {
	data []byte
	// end[k] is where line ledgerLineOrder[k]'s encoding ends in data
	// (it starts where line k-1's ends).
	end [nLedgerLines]uint32
}

// encodeSegs packs each line's sorted, disjoint intervals (segs[k] are
// line ledgerLineOrder[k]'s) into one stepSegs. It encodes into *scratch (reused
// from step to step) and keeps an exact copy, so no step holds spare
// capacity.
func encodeSegs(segs *[nLedgerLines][]trace.Span, scratch *[]byte) stepSegs {
	var s stepSegs
	b := (*scratch)[:0]
	for k := range ledgerLineOrder {
		prev := trace.Time(0)
		for _, sp := range segs[k] {
			b = binary.AppendVarint(b, int64(sp.Start-prev))
			b = binary.AppendVarint(b, int64(sp.End-sp.Start))
			prev = sp.End
		}
		s.end[k] = uint32(len(b))
	}
	*scratch = b
	if len(b) > 0 {
		s.data = slices.Clone(b)
	}
	return s
}

// line returns line's intervals, decoded into a fresh slice; nil when
// none.
func (s *stepSegs) line(line string) []trace.Span {
	k := slices.Index(ledgerLineOrder, line)
	if k < 0 {
		return nil
	}
	from := uint32(0)
	if k > 0 {
		from = s.end[k-1]
	}
	b := s.data[from:s.end[k]]
	if len(b) == 0 {
		return nil
	}
	var out []trace.Span
	prev := trace.Time(0)
	for len(b) > 0 {
		d, n := binary.Varint(b)
		l, m := binary.Varint(b[n:])
		b = b[n+m:]
		sp := trace.Span{Start: prev + trace.Time(d)}
		sp.End = sp.Start + trace.Time(l)
		out = append(out, sp)
		prev = sp.End
	}
	return out
}

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
// line ledgerLineOrder[k]'s) into one stepSegs. It encodes into *scratch
// (reused from step to step) and keeps an exact copy in arena, so no step
// holds spare capacity and steps do not allocate one by one.
func encodeSegs(segs *[nLedgerLines][]trace.Span, scratch *[]byte, arena *segArena) stepSegs {
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
		s.data = arena.keep(b)
	}
	return s
}

// segArenaBlock is the size of a segArena's blocks: a few dozen steps'
// encodings, so a block's unused tail is little beside what it holds,
// and small enough to take the allocator's fast path (64 KB blocks
// measured slower than a clone per step).
const segArenaBlock = 8 << 10

// segArena hands out exact copies of steps' encodings from shared
// blocks: a copy each, allocated one by one, was thousands of small
// allocations per analysis.
type segArena struct {
	block []byte // the current block's free part
}

// keep returns a copy of b whose capacity is its length, from the
// current block, or a new one where b does not fit.
func (a *segArena) keep(b []byte) []byte {
	if len(b) > cap(a.block) {
		if len(b) > segArenaBlock/4 { // large: its own allocation
			return slices.Clone(b)
		}
		a.block = make([]byte, 0, segArenaBlock)
	}
	out := append(a.block, b...)
	a.block = a.block[len(b):len(b):cap(a.block)]
	return out[:len(b):len(b)]
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

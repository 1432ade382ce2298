package sqlfile

import (
	"encoding/binary"
	"fmt"
)

// Leaf is one leaf page of a table's B-tree and how many rows it holds.
type Leaf struct {
	Page  uint32
	Cells int
}

// Leaves returns the leaf pages of t in key order with their row counts,
// reading the interior pages and only the header of each leaf: so a
// reader can size its output before decoding a row, and share the leaves
// out among goroutines evenly (ScanLeaves). Each page may be reached
// once: a page reached twice is a cycle, and a CorruptError.
func (db *DB) Leaves(t *Table) ([]Leaf, error) {
	if t.withoutRow {
		return nil, fmt.Errorf("table %s is a WITHOUT ROWID table, which this reader does not read", t.Name)
	}
	lw := &leafWalker{db: db, t: t, seen: make([]uint64, db.pages/64+1)}
	if err := lw.visit(t.root, 0); err != nil {
		return nil, err
	}
	return lw.leaves, nil
}

type leafWalker struct {
	db     *DB
	t      *Table
	seen   []uint64
	bufs   [][]byte // one page buffer per depth
	leaves []Leaf
}

// visit notes page pg's leaves: pg itself, or those under it.
func (lw *leafWalker) visit(pg uint32, depth int) error {
	db, t := lw.db, lw.t
	if depth >= maxDepth {
		return &CorruptError{Offset: db.offset(pg, 0), Msg: fmt.Sprintf("table %s's B-tree is more than %d levels deep (a cycle?)", t.Name, maxDepth)}
	}
	if pg == 0 || pg > db.pages {
		return &CorruptError{Offset: db.size, Msg: fmt.Sprintf("table %s refers to page %d outside the file's %d pages", t.Name, pg, db.pages)}
	}
	if lw.seen[pg/64]&(1<<(pg%64)) != 0 {
		return &CorruptError{Offset: db.offset(pg, 0), Msg: fmt.Sprintf("table %s reaches page %d twice (a cycle)", t.Name, pg)}
	}
	lw.seen[pg/64] |= 1 << (pg % 64)
	hdr := 0
	if pg == 1 {
		hdr = 100
	}
	// The header alone tells a leaf, whose cells ScanLeaves reads.
	var head [12]byte
	if _, err := db.r.ReadAt(head[:min(12, db.pageSize-hdr)], db.offset(pg, hdr)); err != nil {
		return db.readError(db.offset(pg, hdr), err)
	}
	n := int(binary.BigEndian.Uint16(head[3:]))
	switch head[0] {
	case 0x0d:
		if hdr+8+2*n > db.usable {
			return &CorruptError{Offset: db.offset(pg, hdr+3), Msg: fmt.Sprintf("page %d claims %d cells, more than fit", pg, n)}
		}
		lw.leaves = append(lw.leaves, Leaf{Page: pg, Cells: n})
		return nil
	case 0x05:
	default:
		return &CorruptError{Offset: db.offset(pg, hdr), Msg: fmt.Sprintf("table %s: page %d has B-tree page type %#x, want a table page (5 or 13)", t.Name, pg, head[0])}
	}
	for len(lw.bufs) <= depth {
		lw.bufs = append(lw.bufs, make([]byte, db.pageSize))
	}
	kids, err := db.children(t, pg, lw.bufs[depth])
	if err != nil {
		return err
	}
	for _, k := range kids {
		if err := lw.visit(k, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// children returns the child pages of interior table page pg in key
// order, or nil if pg is a leaf.
func (db *DB) children(t *Table, pg uint32, buf []byte) ([]uint32, error) {
	if err := db.page(pg, buf); err != nil {
		return nil, err
	}
	hdr := 0
	if pg == 1 {
		hdr = 100
	}
	switch buf[hdr] {
	case 0x0d:
		return nil, nil
	case 0x05:
	default:
		return nil, &CorruptError{Offset: db.offset(pg, hdr), Msg: fmt.Sprintf("table %s: page %d has B-tree page type %#x, want a table page (5 or 13)", t.Name, pg, buf[hdr])}
	}
	n := int(binary.BigEndian.Uint16(buf[hdr+3:]))
	ptrs := hdr + 12
	if ptrs+2*n > db.usable {
		return nil, &CorruptError{Offset: db.offset(pg, hdr+3), Msg: fmt.Sprintf("page %d claims %d cells, more than fit", pg, n)}
	}
	kids := make([]uint32, 0, n+1)
	for i := 0; i < n; i++ {
		at := int(binary.BigEndian.Uint16(buf[ptrs+2*i:]))
		if at < ptrs+2*n || at+4 > db.usable {
			return nil, &CorruptError{Offset: db.offset(pg, ptrs+2*i), Msg: fmt.Sprintf("page %d: cell %d points to offset %d, outside the cell area", pg, i, at)}
		}
		kids = append(kids, binary.BigEndian.Uint32(buf[at:]))
	}
	return append(kids, binary.BigEndian.Uint32(buf[hdr+8:])), nil
}

// runPages is the most pages ScanLeaves reads at once: leaves that follow
// each other in the file (as a table written in rowid order has them)
// come in one read of up to 256 KiB at 4 KiB pages, into a buffer of
// that bounded size.
const runPages = 64

// ScanLeaves calls fn for each row of the leaves (from Leaves) in order.
// A leaf must still hold the rows Leaves counted (else a CorruptError),
// so fn is called at most as many times as the leaves' Cells add up to.
// Calls for different leaves may run concurrently, each by one goroutine.
func (db *DB) ScanLeaves(t *Table, leaves []Leaf, fn func(row *Row) error) error {
	s := &scanner{db: db, t: t, fn: fn}
	s.row.table = t
	buf := make([]byte, min(runPages, max(len(leaves), 1))*db.pageSize)
	for len(leaves) > 0 {
		k := 1
		for k < len(leaves) && k < runPages && leaves[k].Page == leaves[k-1].Page+1 {
			k++
		}
		first := leaves[0].Page
		if first == 0 || uint64(first)+uint64(k)-1 > uint64(db.pages) {
			return &CorruptError{Offset: db.size, Msg: fmt.Sprintf("table %s refers to page %d outside the file's %d pages", t.Name, first, db.pages)}
		}
		run := buf[:k*db.pageSize]
		if _, err := db.r.ReadAt(run, db.offset(first, 0)); err != nil {
			return db.readError(db.offset(first, 0), err)
		}
		for i, l := range leaves[:k] {
			err := s.leafPage(l.Page, run[i*db.pageSize:(i+1)*db.pageSize], l.Cells)
			if err == ErrStop {
				return nil
			}
			if err != nil {
				return err
			}
		}
		leaves = leaves[k:]
	}
	return nil
}

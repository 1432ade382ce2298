package sqlfile

import (
	"encoding/binary"
	"fmt"
)

// Part is a key-ordered share of a table: the subtrees under some pages
// of one level of its B-tree. The parts Partitions returns, scanned in
// order, give every row of the table in rowid order, as Scan does.
type Part struct {
	t     *Table
	pages []uint32
}

// Partitions splits t into up to n parts of about equal size, to scan in
// parallel with ScanPart. It descends from the root until a level has at
// least 4n pages (or it reaches the leaves), reading interior pages only.
func (db *DB) Partitions(t *Table, n int) ([]Part, error) {
	if t.withoutRow {
		return nil, fmt.Errorf("table %s is a WITHOUT ROWID table, which this reader does not read", t.Name)
	}
	level := []uint32{t.root}
	buf := make([]byte, db.pageSize)
	for depth := 0; n > 1 && len(level) < 4*n && depth < maxDepth; depth++ {
		var next []uint32
		for _, pg := range level {
			kids, err := db.children(t, pg, buf)
			if err != nil {
				return nil, err
			}
			if kids == nil { // a leaf: the level above is as deep as it goes
				next = nil
				break
			}
			next = append(next, kids...)
			if len(next) > 1<<20 {
				return nil, &CorruptError{Offset: db.offset(pg, 0), Msg: fmt.Sprintf("table %s: more interior pointers than the file has pages", t.Name)}
			}
		}
		if next == nil {
			break
		}
		level = next
	}
	n = max(min(n, len(level)), 1)
	parts := make([]Part, 0, n)
	for i := 0; i < n; i++ {
		parts = append(parts, Part{t: t, pages: level[i*len(level)/n : (i+1)*len(level)/n]})
	}
	return parts, nil
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

// ScanPart calls fn for each row of part p in rowid order, like Scan.
// Parts of one table may be scanned concurrently, each by one goroutine.
func (db *DB) ScanPart(p Part, fn func(row *Row) error) error {
	s := &scanner{db: db, t: p.t, fn: fn, seen: make([]uint64, db.pages/64+1)}
	s.row.table = p.t
	for _, pg := range p.pages {
		if err := s.walk(pg, 0); err != nil {
			if err == ErrStop {
				return nil
			}
			return err
		}
	}
	return nil
}

package sqlfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Writer writes a new SQLite database of rowid tables, one table after
// another, each row appended in rowid order: leaf pages are written as
// they fill, the interior pages of a table's B-tree when the table ends,
// and the schema (page 1, with the file header) when the writer closes.
// It holds one page per B-tree level and a page reference per leaf, so a
// database of any size is written in little memory. It writes no index,
// no free page and no pointer map: what a generator of test and
// benchmark exports needs, and a file sqlite3 checks as intact.
type Writer struct {
	w        io.WriterAt
	pageSize int
	next     uint32 // the next page number to give out
	buf      []byte // pages not yet written, from page bufFirst on
	bufFirst uint32
	schema   []schemaRow
	cur      *TableWriter
	cell     []byte // scratch for leafCell
	err      error
}

type schemaRow struct {
	name, sql string
	root      uint32
}

// childRef is a written page and the largest rowid under it.
type childRef struct {
	page uint32
	key  int64
}

// NewWriter starts a database written to w with pages of pageSize bytes
// (a power of two from 512 to 65536).
func NewWriter(w io.WriterAt, pageSize int) (*Writer, error) {
	if pageSize < 512 || pageSize > 65536 || pageSize&(pageSize-1) != 0 {
		return nil, fmt.Errorf("page size %d is not a power of two from 512 to 65536", pageSize)
	}
	// Page 1 (the header and the schema's root) is written last.
	return &Writer{w: w, pageSize: pageSize, next: 2, bufFirst: 2}, nil
}

// TableWriter appends the rows of one table.
type TableWriter struct {
	wr     *Writer
	name   string
	sql    string
	leaf   *pageBuilder
	last   int64
	rows   int
	leaves []childRef
}

// Create ends the table being written, if any, and starts table name,
// declared by sql (a CREATE TABLE statement).
func (wr *Writer) Create(name, sql string) (*TableWriter, error) {
	if err := wr.endTable(); err != nil {
		return nil, err
	}
	wr.cur = &TableWriter{wr: wr, name: name, sql: sql, leaf: newPage(wr.pageSize, 0, 0x0d)}
	return wr.cur, nil
}

// Append adds a row: its record (AppendRecord) under rowid, which must be
// larger than the table's previous one.
func (tw *TableWriter) Append(rowid int64, record []byte) error {
	wr := tw.wr
	if wr.err != nil {
		return wr.err
	}
	if wr.cur != tw {
		return errors.New("sqlfile: append to a table that is no longer being written")
	}
	if tw.rows > 0 && rowid <= tw.last {
		return fmt.Errorf("sqlfile: table %s: rowid %d after %d (rows go in increasing rowid order)", tw.name, rowid, tw.last)
	}
	cell, err := wr.leafCell(rowid, record)
	if err != nil {
		return err
	}
	if !tw.leaf.add(cell) {
		if err := tw.flushLeaf(); err != nil {
			return err
		}
		tw.leaf.add(cell)
	}
	tw.last = rowid
	tw.rows++
	return nil
}

func (tw *TableWriter) flushLeaf() error {
	pg, err := tw.wr.writePage(tw.leaf.finish())
	if err != nil {
		return err
	}
	tw.leaves = append(tw.leaves, childRef{pg, tw.last})
	tw.leaf.reset(0, 0x0d)
	return nil
}

// endTable writes the current table's last leaf and its interior pages.
func (wr *Writer) endTable() error {
	tw := wr.cur
	if tw == nil || wr.err != nil {
		return wr.err
	}
	wr.cur = nil
	if tw.leaf.n > 0 || len(tw.leaves) == 0 {
		if err := tw.flushLeaf(); err != nil {
			return err
		}
	}
	root, _, err := wr.interior(tw.leaves, false)
	if err != nil {
		return err
	}
	wr.schema = append(wr.schema, schemaRow{tw.name, tw.sql, root})
	return nil
}

// leafCell builds a table leaf cell for a record, writing the part that
// does not fit on the page to overflow pages. The cell is valid until the
// next call.
func (wr *Writer) leafCell(rowid int64, rec []byte) ([]byte, error) {
	cell := AppendVarint(wr.cell[:0], uint64(len(rec)))
	defer func() { wr.cell = cell[:0] }()
	cell = AppendVarint(cell, uint64(rowid))
	local := localSize(wr.pageSize, len(rec))
	cell = append(cell, rec[:local]...)
	if local == len(rec) {
		return cell, nil
	}
	// Overflow pages are numbered in the order they are written, so the
	// first one's number is known before the chain is written.
	rest := rec[local:]
	per := wr.pageSize - 4
	cell = binary.BigEndian.AppendUint32(cell, wr.next)
	for len(rest) > 0 {
		pg := make([]byte, wr.pageSize)
		take := min(len(rest), per)
		copy(pg[4:], rest[:take])
		rest = rest[take:]
		if len(rest) > 0 {
			binary.BigEndian.PutUint32(pg, wr.next+1)
		}
		if _, err := wr.writePage(pg); err != nil {
			return nil, err
		}
	}
	return cell, nil
}

// localSize is how much of a payload of size bytes a table leaf page of
// usable size u holds (the rest goes to overflow pages), as DB.localSize.
func localSize(u, size int) int {
	x := u - 35
	if size <= x {
		return size
	}
	m := (u-12)*32/255 - 23
	if k := m + (size-m)%(u-4); k <= x {
		return k
	}
	return m
}

// interior writes the interior levels above a level of pages and returns
// the root's page number. With page1 the top page is not written but
// returned, laid out for page 1 (after the file header).
func (wr *Writer) interior(level []childRef, page1 bool) (uint32, []byte, error) {
	hdr := 0
	if page1 {
		hdr = 100
	}
	for {
		if len(level) == 1 && !page1 {
			return level[0].page, nil, nil
		}
		// The whole level under one page: the root.
		if top := newPage(wr.pageSize, hdr, 0x05); top.fill(level) == len(level) {
			if page1 {
				return 1, top.finish(), nil
			}
			pg, err := wr.writePage(top.finish())
			return pg, nil, err
		}
		var up []childRef
		p := newPage(wr.pageSize, 0, 0x05)
		for len(level) > 0 {
			k := p.fill(level)
			pg, err := wr.writePage(p.finish())
			if err != nil {
				return 0, nil, err
			}
			up = append(up, childRef{pg, level[k-1].key})
			level = level[k:]
			p.reset(0, 0x05)
		}
		level = up
	}
}

// Close ends the last table and writes the schema and the file header.
func (wr *Writer) Close() error {
	if err := wr.endTable(); err != nil {
		return err
	}
	page1, err := wr.writeSchema()
	if err != nil {
		return err
	}
	if err := wr.flush(); err != nil {
		return err
	}
	wr.header(page1)
	return wr.writeAt(1, page1)
}

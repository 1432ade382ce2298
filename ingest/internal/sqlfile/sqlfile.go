// Package sqlfile reads tables out of a SQLite database file without
// SQLite: a small read-only walker of the file format's table B-trees
// (https://www.sqlite.org/fileformat2.html), enough to stream every row of
// a rowid table in key order. It runs no SQL and uses no index: Nsight
// Systems exports are read whole, table by table, so a scan is all that
// is needed, and the reader costs no dependency and no compile time.
//
// Every structure read from the file is bounds-checked: a truncated or
// corrupt file gives a *CorruptError naming the byte offset, never a
// panic or an endless walk (each page is visited at most once per scan).
package sqlfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Magic is the 16 bytes every SQLite 3 database file starts with.
const Magic = "SQLite format 3\x00"

// CorruptError reports a database file whose structure is broken.
type CorruptError struct {
	Offset int64 // byte offset in the file where reading failed
	Msg    string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("corrupt SQLite database at byte %d: %s", e.Offset, e.Msg)
}

// ErrNotSQLite is returned by Open for input without the SQLite header.
var ErrNotSQLite = errors.New("not a SQLite database (no \"SQLite format 3\" header)")

// DB is an open database file.
type DB struct {
	r        io.ReaderAt
	size     int64
	pageSize int
	usable   int
	pages    uint32
	tables   []*Table
	byName   map[string]*Table
}

// Table is one table of the schema.
type Table struct {
	Name string
	// Columns are the column names in declaration order.
	Columns []string
	// RowidColumn is the column that aliases the rowid (INTEGER PRIMARY
	// KEY), whose value the record stores as NULL, or -1.
	RowidColumn int
	// Indexed is true when a UNIQUE or PRIMARY KEY constraint gives the
	// table an index (sqlite_autoindex_*), which any copy of the table
	// must have too (an index made by CREATE INDEX may be left out).
	Indexed    bool
	root       uint32
	withoutRow bool
	sql        string
}

// SQL returns the table's CREATE TABLE statement.
func (t *Table) SQL() string { return t.sql }

// Column returns the index of the column named name (ASCII
// case-insensitive, as SQL is), or -1.
func (t *Table) Column(name string) int {
	for i, c := range t.Columns {
		if strings.EqualFold(c, name) {
			return i
		}
	}
	return -1
}

// Open reads the header and schema of the database in r (size bytes).
func Open(r io.ReaderAt, size int64) (*DB, error) {
	var hdr [100]byte
	if size < 100 {
		if size >= 16 {
			if _, err := r.ReadAt(hdr[:16], 0); err == nil && string(hdr[:16]) == Magic {
				return nil, &CorruptError{Offset: size, Msg: "file ends inside the 100-byte header (truncated)"}
			}
		}
		return nil, ErrNotSQLite
	}
	if _, err := r.ReadAt(hdr[:], 0); err != nil {
		return nil, err
	}
	if string(hdr[:16]) != Magic {
		return nil, ErrNotSQLite
	}
	ps := int(binary.BigEndian.Uint16(hdr[16:]))
	if ps == 1 {
		ps = 65536
	}
	if ps < 512 || ps&(ps-1) != 0 {
		return nil, &CorruptError{Offset: 16, Msg: fmt.Sprintf("page size %d is not a power of two from 512 to 65536", ps)}
	}
	reserved := int(hdr[20])
	db := &DB{r: r, size: size, pageSize: ps, usable: ps - reserved, byName: map[string]*Table{}}
	if db.usable < 480 {
		return nil, &CorruptError{Offset: 20, Msg: fmt.Sprintf("%d reserved bytes per page leave too little usable space", reserved)}
	}
	if enc := binary.BigEndian.Uint32(hdr[56:]); enc > 1 {
		return nil, &CorruptError{Offset: 56, Msg: fmt.Sprintf("text encoding %d (UTF-16) is not supported: only UTF-8 databases are read", enc)}
	}
	db.pages = uint32(size / int64(ps))
	if size%int64(ps) != 0 {
		return nil, &CorruptError{Offset: size, Msg: fmt.Sprintf("file size %d is not a multiple of the page size %d (truncated?)", size, ps)}
	}
	if n := binary.BigEndian.Uint32(hdr[28:]); n > db.pages && binary.BigEndian.Uint32(hdr[24:]) == binary.BigEndian.Uint32(hdr[92:]) {
		return nil, &CorruptError{Offset: size, Msg: fmt.Sprintf("the header says %d pages but the file holds %d (truncated)", n, db.pages)}
	}
	if err := db.readSchema(); err != nil {
		return nil, err
	}
	return db, nil
}

// Tables returns the schema's tables in schema order.
func (db *DB) Tables() []*Table { return db.tables }

// Table returns the table named name (case-insensitive), or nil.
func (db *DB) Table(name string) *Table { return db.byName[strings.ToLower(name)] }

func (db *DB) readSchema() error {
	master := &Table{Name: "sqlite_schema", Columns: []string{"type", "name", "tbl_name", "rootpage", "sql"}, RowidColumn: -1, root: 1}
	indexed := map[string]bool{}
	err := db.Scan(master, func(row *Row) error {
		if string(row.Text(0)) == "index" && strings.HasPrefix(string(row.Text(1)), "sqlite_autoindex_") {
			indexed[strings.ToLower(string(row.Text(2)))] = true
		}
		if string(row.Text(0)) != "table" {
			return nil
		}
		name := string(row.Text(1))
		root, _ := row.Int(3)
		t := &Table{Name: name, sql: string(row.Text(4)), root: uint32(root), RowidColumn: -1}
		if root <= 0 || root > int64(db.pages) {
			if root == 0 { // virtual tables have no pages
				return nil
			}
			return &CorruptError{Offset: row.Offset, Msg: fmt.Sprintf("table %s has root page %d outside the file's %d pages", name, root, db.pages)}
		}
		t.Columns, t.RowidColumn, t.withoutRow = parseCreate(t.sql)
		db.tables = append(db.tables, t)
		db.byName[strings.ToLower(name)] = t
		return nil
	})
	for _, t := range db.tables {
		t.Indexed = indexed[strings.ToLower(t.Name)]
	}
	return err
}

// page reads page n (1-based) into buf.
func (db *DB) page(n uint32, buf []byte) error {
	if n == 0 || n > db.pages {
		return &CorruptError{Offset: db.size, Msg: fmt.Sprintf("page number %d outside the file's %d pages", n, db.pages)}
	}
	off := int64(n-1) * int64(db.pageSize)
	if _, err := db.r.ReadAt(buf[:db.pageSize], off); err != nil {
		return db.readError(off, err)
	}
	return nil
}

// readError names a failed read at off: the end of the file is a
// truncation.
func (db *DB) readError(off int64, err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return &CorruptError{Offset: off, Msg: "file ends inside a page (truncated)"}
	}
	return err
}

func (db *DB) offset(page uint32, at int) int64 {
	return int64(page-1)*int64(db.pageSize) + int64(at)
}

// ErrStop may be returned by a Scan callback to end the scan early
// without an error.
var ErrStop = errors.New("stop scan")

// scanner walks one table B-tree.
type scanner struct {
	db      *DB
	t       *Table
	fn      func(*Row) error
	seen    []uint64 // bitmap of pages visited in this scan
	bufs    [][]byte // one page buffer per depth
	payload []byte
	ovbuf   []byte
	row     Row
}

// maxDepth bounds the B-tree's depth: a real one of 2^32 pages is at most
// ~20 deep, so anything deeper is a cycle or garbage.
const maxDepth = 40

// Scan calls fn for each row of t in rowid order. The Row and the bytes
// it returns are valid only during the call.
func (db *DB) Scan(t *Table, fn func(row *Row) error) error {
	if t.withoutRow {
		return fmt.Errorf("table %s is a WITHOUT ROWID table, which this reader does not read", t.Name)
	}
	s := &scanner{db: db, t: t, fn: fn, seen: make([]uint64, db.pages/64+1)}
	s.row.table = t
	err := s.walk(t.root, 0)
	if err == ErrStop {
		return nil
	}
	return err
}

func (s *scanner) walk(pg uint32, depth int) error {
	db := s.db
	if depth >= maxDepth {
		return &CorruptError{Offset: db.offset(pg, 0), Msg: fmt.Sprintf("table %s's B-tree is more than %d levels deep (a cycle?)", s.t.Name, maxDepth)}
	}
	if pg == 0 || pg > db.pages {
		return &CorruptError{Offset: db.size, Msg: fmt.Sprintf("table %s refers to page %d outside the file's %d pages", s.t.Name, pg, db.pages)}
	}
	if s.seen[pg/64]&(1<<(pg%64)) != 0 {
		return &CorruptError{Offset: db.offset(pg, 0), Msg: fmt.Sprintf("table %s reaches page %d twice (a cycle)", s.t.Name, pg)}
	}
	s.seen[pg/64] |= 1 << (pg % 64)
	for len(s.bufs) <= depth {
		s.bufs = append(s.bufs, make([]byte, db.pageSize))
	}
	buf := s.bufs[depth]
	if err := db.page(pg, buf); err != nil {
		return err
	}
	hdr := 0
	if pg == 1 {
		hdr = 100
	}
	if buf[hdr] == 0x0d {
		return s.leafPage(pg, buf, -1)
	}
	if buf[hdr] != 0x05 {
		return &CorruptError{Offset: db.offset(pg, hdr), Msg: fmt.Sprintf("table %s: page %d has B-tree page type %#x, want a table page (5 or 13)", s.t.Name, pg, buf[hdr])}
	}
	kids, err := db.childrenOf(s.t, pg, buf)
	if err != nil {
		return err
	}
	for _, k := range kids {
		if err := s.walk(k, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// leafPage calls fn for each cell of leaf page pg (in buf), which must
// hold want cells (any number if want < 0).
func (s *scanner) leafPage(pg uint32, buf []byte, want int) error {
	db := s.db
	hdr := 0
	if pg == 1 {
		hdr = 100
	}
	if buf[hdr] != 0x0d {
		return &CorruptError{Offset: db.offset(pg, hdr), Msg: fmt.Sprintf("table %s: page %d has B-tree page type %#x, want a leaf page (13)", s.t.Name, pg, buf[hdr])}
	}
	n := int(binary.BigEndian.Uint16(buf[hdr+3:]))
	ptrs := hdr + 8
	if ptrs+2*n > db.usable {
		return &CorruptError{Offset: db.offset(pg, hdr+3), Msg: fmt.Sprintf("page %d claims %d cells, more than fit", pg, n)}
	}
	if want >= 0 && n != want {
		return &CorruptError{Offset: db.offset(pg, hdr+3), Msg: fmt.Sprintf("page %d holds %d cells, then %d (the file changed while read?)", pg, want, n)}
	}
	for i := 0; i < n; i++ {
		at := int(binary.BigEndian.Uint16(buf[ptrs+2*i:]))
		if at < ptrs+2*n || at+4 > db.usable {
			return &CorruptError{Offset: db.offset(pg, ptrs+2*i), Msg: fmt.Sprintf("page %d: cell %d points to offset %d, outside the cell area", pg, i, at)}
		}
		if err := s.leafCell(pg, buf, at); err != nil {
			return err
		}
	}
	return nil
}

// leafCell decodes the table leaf cell at buf[at:] and calls fn with it.
func (s *scanner) leafCell(pg uint32, buf []byte, at int) error {
	db := s.db
	end := db.usable
	size, k := uvarint(buf[at:end])
	if k == 0 {
		return &CorruptError{Offset: db.offset(pg, at), Msg: "bad payload-size varint"}
	}
	rowid, k2 := uvarint(buf[at+k : end])
	if k2 == 0 {
		return &CorruptError{Offset: db.offset(pg, at+k), Msg: "bad rowid varint"}
	}
	p := at + k + k2
	if size > uint64(db.size) {
		return &CorruptError{Offset: db.offset(pg, at), Msg: fmt.Sprintf("payload of %d bytes is larger than the file", size)}
	}
	local := db.localSize(int(size))
	if p+local > end {
		return &CorruptError{Offset: db.offset(pg, at), Msg: "cell runs past the end of its page"}
	}
	payload := buf[p : p+local]
	if local < int(size) {
		if p+local+4 > end {
			return &CorruptError{Offset: db.offset(pg, at), Msg: "overflow pointer runs past the end of its page"}
		}
		var err error
		if payload, err = s.overflow(payload, int(size), binary.BigEndian.Uint32(buf[p+local:])); err != nil {
			return err
		}
	}
	s.row.Rowid = int64(rowid)
	s.row.Offset = db.offset(pg, at)
	if err := s.row.decode(payload); err != nil {
		return err
	}
	return s.fn(&s.row)
}

// localSize is how much of a payload of size bytes a table leaf page
// holds; the rest goes to overflow pages.
func (db *DB) localSize(size int) int {
	u := db.usable
	x := u - 35
	if size <= x {
		return size
	}
	m := (u-12)*32/255 - 23
	k := m + (size-m)%(u-4)
	if k <= x {
		return k
	}
	return m
}

// overflow assembles a payload of size bytes from its local part and the
// chain of overflow pages starting at next.
func (s *scanner) overflow(local []byte, size int, next uint32) ([]byte, error) {
	db := s.db
	s.payload = append(s.payload[:0], local...)
	if s.ovbuf == nil {
		s.ovbuf = make([]byte, db.pageSize)
	}
	pbuf := s.ovbuf
	for hops := uint32(0); len(s.payload) < size; hops++ {
		if next == 0 || hops > db.pages {
			return nil, &CorruptError{Offset: db.size, Msg: fmt.Sprintf("overflow chain ends after %d of %d bytes", len(s.payload), size)}
		}
		if err := db.page(next, pbuf); err != nil {
			return nil, err
		}
		take := min(size-len(s.payload), db.usable-4)
		s.payload = append(s.payload, pbuf[4:4+take]...)
		next = binary.BigEndian.Uint32(pbuf)
	}
	return s.payload, nil
}

// uvarint decodes a SQLite varint (big-endian, 7 bits a byte, the ninth
// byte whole); n is 0 if b ends first.
func uvarint(b []byte) (v uint64, n int) {
	for i := 0; i < 9; i++ {
		if i >= len(b) {
			return 0, 0
		}
		c := b[i]
		if i == 8 {
			return v<<8 | uint64(c), 9
		}
		v = v<<7 | uint64(c&0x7f)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return v, 9
}

// PageSize returns the database's page size in bytes.
func (db *DB) PageSize() int { return db.pageSize }

package sqlfile

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// pageBuilder lays out one B-tree page: cell pointers after the page
// header, cells from the end of the page down.
type pageBuilder struct {
	buf     []byte
	hdr     int // offset of the B-tree page header (100 on page 1)
	kind    byte
	n       int
	content int    // start of the cell content area
	right   uint32 // interior pages: the right-most child
}

func newPage(size, hdr int, kind byte) *pageBuilder {
	p := &pageBuilder{buf: make([]byte, size)}
	p.reset(hdr, kind)
	return p
}

func (p *pageBuilder) reset(hdr int, kind byte) {
	clear(p.buf)
	p.hdr, p.kind, p.n, p.content, p.right = hdr, kind, 0, len(p.buf), 0
}

// headerSize is the size of the B-tree page header: 8 bytes on a leaf,
// 12 on an interior page (the right-most pointer).
func (p *pageBuilder) headerSize() int {
	if p.kind == 0x05 {
		return 12
	}
	return 8
}

// add puts cell on the page if it fits.
func (p *pageBuilder) add(cell []byte) bool {
	ptr := p.hdr + p.headerSize() + 2*p.n
	if p.content-len(cell) < ptr+2 {
		return false
	}
	p.content -= len(cell)
	copy(p.buf[p.content:], cell)
	binary.BigEndian.PutUint16(p.buf[ptr:], uint16(p.content))
	p.n++
	return true
}

// fill adds interior cells for the pages of level while they fit, the
// last one taken as the right-most child, and returns how many it took.
func (p *pageBuilder) fill(level []childRef) int {
	var cell [4 + 9]byte
	for i, c := range level {
		if i == len(level)-1 {
			p.right = c.page
			return len(level)
		}
		binary.BigEndian.PutUint32(cell[:], c.page)
		if !p.add(AppendVarint(cell[:4], uint64(c.key))) {
			p.right = c.page
			return i + 1
		}
	}
	return len(level)
}

// finish writes the page header and returns the page.
func (p *pageBuilder) finish() []byte {
	h := p.buf[p.hdr:]
	h[0] = p.kind
	binary.BigEndian.PutUint16(h[1:], 0) // no freeblock
	binary.BigEndian.PutUint16(h[3:], uint16(p.n))
	binary.BigEndian.PutUint16(h[5:], uint16(p.content)) // 65536 wraps to 0, as the format says
	h[7] = 0
	if p.kind == 0x05 {
		binary.BigEndian.PutUint32(h[8:], p.right)
	}
	return p.buf
}

// writeBuffer is how many bytes of pages the writer gathers per write.
const writeBuffer = 1 << 20

// writePage gives pg the next page number and writes it (buffered).
func (wr *Writer) writePage(pg []byte) (uint32, error) {
	if wr.err != nil {
		return 0, wr.err
	}
	n := wr.next
	wr.next++
	wr.buf = append(wr.buf, pg...)
	if len(wr.buf) >= writeBuffer {
		return n, wr.flush()
	}
	return n, nil
}

func (wr *Writer) flush() error {
	if len(wr.buf) > 0 && wr.err == nil {
		wr.err = wr.writeAt(wr.bufFirst, wr.buf)
		wr.bufFirst += uint32(len(wr.buf) / wr.pageSize)
		wr.buf = wr.buf[:0]
	}
	return wr.err
}

func (wr *Writer) writeAt(page uint32, b []byte) error {
	if _, err := wr.w.WriteAt(b, int64(page-1)*int64(wr.pageSize)); err != nil {
		wr.err = fmt.Errorf("writing the database: %w", err)
	}
	return wr.err
}

// writeSchema writes the sqlite_schema table's pages but page 1, which
// it returns (the schema's root) for Close to write with the header.
func (wr *Writer) writeSchema() ([]byte, error) {
	var cells [][]byte
	for i, s := range wr.schema {
		rec := AppendRecord(nil, []Value{{Type: Text, Bytes: []byte("table")}, {Type: Text, Bytes: []byte(s.name)},
			{Type: Text, Bytes: []byte(s.name)}, {Type: Integer, Int: int64(s.root)}, {Type: Text, Bytes: []byte(s.sql)}})
		cell, err := wr.leafCell(int64(i+1), rec)
		if err != nil {
			return nil, err
		}
		cells = append(cells, bytes.Clone(cell))
	}
	one := newPage(wr.pageSize, 100, 0x0d)
	fits := true
	for _, c := range cells {
		if fits = one.add(c); !fits {
			break
		}
	}
	if fits {
		return one.finish(), nil
	}
	var leaves []childRef
	p := newPage(wr.pageSize, 0, 0x0d)
	for i := 0; i < len(cells); {
		for i < len(cells) && p.add(cells[i]) {
			i++
		}
		pg, err := wr.writePage(p.finish())
		if err != nil {
			return nil, err
		}
		leaves = append(leaves, childRef{pg, int64(i)})
		p.reset(0, 0x0d)
	}
	_, page1, err := wr.interior(leaves, true)
	return page1, err
}

// header fills the 100-byte file header on page 1.
func (wr *Writer) header(page1 []byte) {
	h := page1[:100]
	copy(h, Magic)
	ps := uint16(wr.pageSize)
	if wr.pageSize == 65536 {
		ps = 1
	}
	binary.BigEndian.PutUint16(h[16:], ps)
	h[18], h[19] = 1, 1 // legacy (rollback journal) file format
	h[20] = 0           // no reserved bytes
	h[21], h[22], h[23] = 64, 32, 32
	binary.BigEndian.PutUint32(h[24:], 1)         // file change counter
	binary.BigEndian.PutUint32(h[28:], wr.next-1) // pages in the file
	binary.BigEndian.PutUint32(h[40:], 1)         // schema cookie
	binary.BigEndian.PutUint32(h[44:], 4)         // schema format
	binary.BigEndian.PutUint32(h[56:], 1)         // UTF-8
	binary.BigEndian.PutUint32(h[92:], 1)         // version-valid-for: the change counter
	binary.BigEndian.PutUint32(h[96:], 3045000)   // SQLITE_VERSION_NUMBER of the format written
}

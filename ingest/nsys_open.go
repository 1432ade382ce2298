package ingest

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/gzip"

	"github.com/tracelens/tracelens/trace"
)

// sniffSize is how much of an input is read to tell a SQLite database
// (plain or gzipped) from JSON.
const sniffSize = 64 << 10

// sqliteHead reports whether head, the start of an input, is a SQLite
// database, or a gzip stream whose content starts like one.
func sqliteHead(head []byte) (sqlite, gz bool) {
	if isSQLite(head) {
		return true, false
	}
	if len(head) < 2 || head[0] != 0x1f || head[1] != 0x8b {
		return false, false
	}
	zr, err := gzip.NewReader(bytes.NewReader(head))
	if err != nil {
		return false, false
	}
	var magic [16]byte
	n, _ := io.ReadFull(zr, magic[:])
	return isSQLite(magic[:n]), true
}

// readFileNsys reads f (size bytes) if it is an Nsight Systems SQLite
// export, plain or gzipped; ok is false for any other content. A plain
// database is read in place, page by page; a gzipped one is decompressed
// into memory first (SQLite's format needs random access).
func readFileNsys(f *os.File, size int64) (t *trace.Trace, ok bool, err error) {
	head := make([]byte, min(size, sniffSize))
	n, _ := f.ReadAt(head, 0)
	sqlite, gz := sqliteHead(head[:n])
	if !sqlite {
		return nil, false, nil
	}
	if !gz {
		t, err = readNsys(f, size)
		return t, true, err
	}
	b, err := gunzipAll(io.NewSectionReader(f, 0, size))
	if err != nil {
		return nil, true, err
	}
	t, err = readNsys(bytes.NewReader(b), int64(len(b)))
	return t, true, err
}

// readStreamNsys reads r if it is an Nsight Systems SQLite export; if it
// is not, rest reads the input again from its start (r itself, rewound,
// when it can seek; else the bytes sniffed followed by the rest of r).
func readStreamNsys(r io.Reader) (t *trace.Trace, rest io.Reader, err error) {
	var at int64 = -1
	seeker, canSeek := r.(io.Seeker)
	if canSeek {
		if p, err := seeker.Seek(0, io.SeekCurrent); err == nil {
			at = p
		}
	}
	head := make([]byte, sniffSize)
	n, err := io.ReadFull(r, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, nil, err
	}
	head = head[:n]
	sqlite, gz := sqliteHead(head)
	if !sqlite {
		if at >= 0 {
			if _, err := seeker.Seek(at, io.SeekStart); err == nil {
				return nil, r, nil
			}
		}
		return nil, io.MultiReader(bytes.NewReader(head), r), nil
	}
	all := io.MultiReader(bytes.NewReader(head), r)
	var b []byte
	if gz {
		b, err = gunzipAll(all)
	} else {
		b, err = io.ReadAll(all)
	}
	if err != nil {
		return nil, nil, err
	}
	t, err = readNsys(bytes.NewReader(b), int64(len(b)))
	return t, nil, err
}

// gunzipAll decompresses every gzip member of r.
func gunzipAll(r io.Reader) ([]byte, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("not a valid gzip file: %w", err)
	}
	defer zr.Close()
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("corrupt gzip data after %d decompressed bytes: %w", len(b), err)
	}
	return b, nil
}

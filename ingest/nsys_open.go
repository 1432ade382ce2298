package ingest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/klauspost/compress/gzip"

	"github.com/tracelens/tracelens/trace"
)

// sniffSize is how much of an input is read to tell a SQLite database
// (plain or gzipped) from JSON.
const sniffSize = 64 << 10

// lfsPrefix starts a Git LFS pointer file, what a clone without git lfs
// leaves in place of a large file.
const lfsPrefix = "version https://git-lfs.github.com/spec/"

// lfsError describes a Git LFS pointer (head is the file's start).
func lfsError(head []byte) error {
	size := ""
	for _, line := range strings.Split(string(head), "\n") {
		if v, ok := strings.CutPrefix(line, "size "); ok {
			size = " of " + strings.TrimSpace(v) + " bytes"
		}
	}
	return &FormatError{Msg: "a Git LFS pointer, not the trace" + size + ": fetch the file with git lfs pull"}
}

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
func readFileNsys(f *os.File, size int64, no nsysOptions) (ts []*trace.Trace, ok bool, err error) {
	head := make([]byte, min(size, sniffSize))
	n, _ := f.ReadAt(head, 0)
	if bytes.HasPrefix(head[:n], []byte(lfsPrefix)) {
		return nil, true, lfsError(head[:n])
	}
	sqlite, gz := sqliteHead(head[:n])
	if !sqlite {
		return nil, false, nil
	}
	if !gz {
		ts, err = readNsysAll(f, size, no)
		return ts, true, err
	}
	ts, err = readSpooled(io.NewSectionReader(f, 0, size), true, no)
	return ts, true, err
}

// readSpooled reads an export that cannot be read in place (gzipped, or
// from a pipe): decompressed if gz, it is copied to a temporary file
// (removed before returning; the page cache holds it, not the heap), or
// into memory if no temporary file can be made.
func readSpooled(r io.Reader, gz bool, no nsysOptions) ([]*trace.Trace, error) {
	if gz {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("not a valid gzip file: %w", err)
		}
		defer zr.Close()
		r = zr
	}
	tmp, err := os.CreateTemp("", "tracelens-*.sqlite")
	if err != nil {
		b, err := io.ReadAll(r)
		if err != nil {
			return nil, spoolError(err, gz, int64(len(b)))
		}
		return readNsysAll(bytes.NewReader(b), int64(len(b)), no)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	n, err := io.Copy(tmp, r)
	if err != nil {
		return nil, spoolError(err, gz, n)
	}
	return readNsysAll(tmp, n, no)
}

// spoolError names a failure to copy an export out of its stream.
func spoolError(err error, gz bool, at int64) error {
	if gz {
		return fmt.Errorf("corrupt gzip data after %d decompressed bytes: %w", at, err)
	}
	return err
}

// readStreamNsys reads r if it is an Nsight Systems SQLite export; if it
// is not, rest reads the input again from its start (r itself, rewound,
// when it can seek; else the bytes sniffed followed by the rest of r).
func readStreamNsys(r io.Reader, workers int) (t *trace.Trace, rest io.Reader, err error) {
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
	if bytes.HasPrefix(head, []byte(lfsPrefix)) {
		return nil, nil, lfsError(head)
	}
	sqlite, gz := sqliteHead(head)
	if !sqlite {
		if at >= 0 {
			if _, err := seeker.Seek(at, io.SeekStart); err == nil {
				return nil, r, nil
			}
		}
		return nil, io.MultiReader(bytes.NewReader(head), r), nil
	}
	if ra, ok := r.(interface {
		io.ReaderAt
		Size() int64
	}); ok && at == 0 && !gz {
		t, err = readNsys(ra, ra.Size(), workers) // in memory already (bytes.Reader)
		return t, nil, err
	}
	ts, err := readSpooled(io.MultiReader(bytes.NewReader(head), r), gz, nsysOptions{workers: workers})
	if err != nil {
		return nil, nil, err
	}
	return ts[0], nil, nil
}

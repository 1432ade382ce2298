package sqlfile

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// memFile is an in-memory io.WriterAt and io.ReaderAt.
type memFile struct{ b []byte }

func (m *memFile) WriteAt(p []byte, off int64) (int, error) {
	if end := int(off) + len(p); end > len(m.b) {
		m.b = append(m.b, make([]byte, end-len(m.b))...)
	}
	return copy(m.b[off:], p), nil
}

// closeOpen finishes the file w wrote into f and opens it.
func closeOpen(t *testing.T, w *Writer, f *memFile) *DB {
	t.Helper()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := Open(bytes.NewReader(f.b), int64(len(f.b)))
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// TestWriterRoundTrip writes tables of every value type, long rows on
// overflow pages, enough rows for a three-level B-tree and enough tables
// for a schema over several pages, and reads them back; sqlite3, when
// installed, must find the file intact and count the same rows.
func TestWriterRoundTrip(t *testing.T) {
	for _, ps := range []int{512, 4096} {
		t.Run(fmt.Sprint(ps), func(t *testing.T) {
			var f memFile
			w, err := NewWriter(&f, ps)
			if err != nil {
				t.Fatal(err)
			}
			const tables, rows = 30, 3000
			for k := 0; k < tables; k++ {
				tw, err := w.Create(fmt.Sprintf("T%d", k), fmt.Sprintf("CREATE TABLE T%d (id INTEGER PRIMARY KEY, n INTEGER, f REAL, s TEXT, b BLOB, z INTEGER)", k))
				if err != nil {
					t.Fatal(err)
				}
				nrows := rows
				if k > 0 {
					nrows = k
				}
				for i := 1; i <= nrows; i++ {
					rec := AppendRecord(nil, rowValues(i))
					if err := tw.Append(int64(i*2), rec); err != nil {
						t.Fatal(err)
					}
				}
			}
			db := closeOpen(t, w, &f)
			if len(db.Tables()) != tables {
				t.Fatalf("%d tables, want %d", len(db.Tables()), tables)
			}
			n := 0
			err = db.Scan(db.Table("T0"), func(r *Row) error {
				n++
				want := rowValues(n)
				if r.Rowid != int64(2*n) {
					return fmt.Errorf("row %d has rowid %d", n, r.Rowid)
				}
				for c := 1; c < 6; c++ {
					if got := r.Value(c); got.Type != want[c].Type || got.Int != want[c].Int || got.Float != want[c].Float || !bytes.Equal(got.Bytes, want[c].Bytes) {
						return fmt.Errorf("row %d column %d: %+v, want %+v", n, c, got, want[c])
					}
				}
				return nil
			})
			if err != nil || n != rows {
				t.Fatalf("%d rows read (%v), want %d", n, err, rows)
			}
			checkSQLite(t, f.b, "T0", rows)
		})
	}
}

// rowValues is row i of the round-trip table: integers of every width,
// a float, text long enough for overflow pages every 7th row, a blob,
// a NULL.
func rowValues(i int) []Value {
	s := strings.Repeat("x", i%50)
	if i%7 == 0 {
		s = strings.Repeat(fmt.Sprint(i), 700)
	}
	ints := []int64{0, 1, -5, 300, -70000, 1 << 30, -(1 << 40), 1 << 62}
	return []Value{{}, {Type: Integer, Int: ints[i%len(ints)] * int64(i%3-1)}, {Type: Float, Float: float64(i) / 3},
		{Type: Text, Bytes: []byte(s)}, {Type: Blob, Bytes: []byte{byte(i), 0, 0xff}}, {}}
}

// checkSQLite runs sqlite3's integrity check on db and counts table's
// rows, when sqlite3 is installed.
func checkSQLite(t *testing.T, db []byte, table string, rows int) {
	t.Helper()
	bin, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Log("sqlite3 not installed: the file was checked by this reader only")
		return
	}
	p := filepath.Join(t.TempDir(), "w.sqlite")
	if err := os.WriteFile(p, db, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, p, "PRAGMA integrity_check; SELECT count(*) FROM "+table+";").CombinedOutput()
	if want := fmt.Sprintf("ok\n%d\n", rows); err != nil || string(out) != want {
		t.Errorf("sqlite3: %v: %q, want %q", err, out, want)
	}
}

// TestVarint checks AppendVarint against uvarint at the width edges.
func TestVarint(t *testing.T) {
	for _, v := range []uint64{0, 127, 128, 16383, 16384, 1<<56 - 1, 1 << 56, 1<<64 - 1} {
		b := AppendVarint(nil, v)
		got, n := uvarint(b)
		if got != v || n != len(b) {
			t.Errorf("%d: encoded in %d bytes, read back %d (%d bytes)", v, len(b), got, n)
		}
	}
}

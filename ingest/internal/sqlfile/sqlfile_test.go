package sqlfile

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/fixtures/sharedtest"
)

// sharedDir holds the real Nsight Systems exports (see its README); CI
// has shared/ beside the checkout.
const sharedDir = "../../../../shared/traces/nsys"

func loadShared(t testing.TB, name string) []byte {
	t.Helper()
	return sharedtest.NsysExport(t, name)
}

// TestTableRowCounts checks every table of every shared export against
// the row counts and columns Python's sqlite3 recorded in tables.tsv.
func TestTableRowCounts(t *testing.T) {
	f, err := os.Open(filepath.Join(sharedDir, "tables.tsv"))
	if err != nil {
		t.Skipf("shared nsys exports not found (%v)", err)
	}
	defer f.Close()
	type want struct {
		rows int
		cols string
	}
	byFile := map[string]map[string]want{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		fs := strings.Split(sc.Text(), "\t")
		if len(fs) < 4 || fs[0] == "file" {
			continue
		}
		n, _ := strconv.Atoi(fs[2])
		if byFile[fs[0]] == nil {
			byFile[fs[0]] = map[string]want{}
		}
		byFile[fs[0]][fs[1]] = want{n, fs[3]}
	}
	if len(byFile) != 10 {
		t.Fatalf("tables.tsv lists %d files, want 10", len(byFile))
	}
	for file, tables := range byFile {
		t.Run(file, func(t *testing.T) {
			b := loadShared(t, file)
			db, err := Open(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			if len(db.Tables()) != len(tables) {
				t.Errorf("%d tables, want %d", len(db.Tables()), len(tables))
			}
			for name, w := range tables {
				tb := db.Table(name)
				if tb == nil {
					t.Errorf("table %s missing", name)
					continue
				}
				if got := strings.Join(tb.Columns, ","); got != w.cols {
					t.Errorf("%s columns %s, want %s", name, got, w.cols)
				}
				n := 0
				if err := db.Scan(tb, func(r *Row) error { n++; return nil }); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if n != w.rows {
					t.Errorf("%s: %d rows, want %d", name, n, w.rows)
				}
				// The leaves of a table, scanned in three groups in
				// order, are its rows in order, as many as they count.
				leaves, err := db.Leaves(tb)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				cells := 0
				for _, l := range leaves {
					cells += l.Cells
				}
				if cells != w.rows {
					t.Errorf("%s: the leaves count %d rows, want %d", name, cells, w.rows)
				}
				n, last := 0, int64(-1<<63)
				for g := 0; g < 3; g++ {
					err := db.ScanLeaves(tb, leaves[g*len(leaves)/3:(g+1)*len(leaves)/3], func(r *Row) error {
						if r.Rowid <= last {
							t.Fatalf("%s: rowid %d after %d", name, r.Rowid, last)
						}
						n, last = n+1, r.Rowid
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
				}
				if n != w.rows {
					t.Errorf("%s: %d rows in the leaves, want %d", name, n, w.rows)
				}
			}
		})
	}
}

// TestTruncated cuts a real export at many lengths: every cut must give
// an error (or, before any table page, ErrNotSQLite), never a panic.
func TestTruncated(t *testing.T) {
	b := loadShared(t, "extra-p__extrap__profile16.sqlite.gz")
	for _, n := range []int{0, 10, 16, 99, 100, 4096, 8192, len(b) / 2, len(b) - 4096} {
		_, err := Open(bytes.NewReader(b[:n]), int64(n))
		if err == nil {
			// Opening may succeed when the schema pages survive; a scan
			// of every table must then fail cleanly or succeed.
			continue
		}
		var ce *CorruptError
		if n >= 16 && !errors.As(err, &ce) {
			t.Errorf("cut at %d: %v, want a CorruptError", n, err)
		}
	}
}

func TestParseCreate(t *testing.T) {
	for _, c := range []struct {
		sql   string
		cols  string
		rowid int
		wr    bool
	}{
		{"CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL)", "id,value", 0, false},
		{"CREATE TABLE a (\n -- c, (x)\n \"end\" INTEGER, b INT PRIMARY KEY, c TEXT DEFAULT 'x,y')", "end,b,c", -1, false},
		{"CREATE TABLE t (x INTEGER, y TEXT, PRIMARY KEY (x))", "x,y", 0, false},
		{"CREATE TABLE t (x TEXT PRIMARY KEY, y) WITHOUT ROWID", "x,y", -1, true},
		{"CREATE TABLE t (a, b CHECK (b > 0), CONSTRAINT u UNIQUE (a, b))", "a,b", -1, false},
	} {
		cols, rowid, wr := parseCreate(c.sql)
		if strings.Join(cols, ",") != c.cols || rowid != c.rowid || wr != c.wr {
			t.Errorf("%q: %v %d %v, want %s %d %v", c.sql, cols, rowid, wr, c.cols, c.rowid, c.wr)
		}
	}
}

// FuzzScan opens mutated databases and scans every table: errors are
// fine, panics and endless walks are not.
func FuzzScan(f *testing.F) {
	for _, p := range []string{"../../testdata/nsys/synthetic.sqlite", "../../testdata/nsys/notnsys.sqlite"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		db, err := Open(bytes.NewReader(in), int64(len(in)))
		if err != nil {
			return
		}
		for _, tb := range db.Tables() {
			_ = db.Scan(tb, func(r *Row) error {
				for i := range tb.Columns {
					r.Int(i)
					r.Float(i)
					r.Text(i)
				}
				return nil
			})
			leaves, err := db.Leaves(tb)
			if err != nil {
				continue
			}
			cells, rows := 0, 0
			for _, l := range leaves {
				cells += l.Cells
			}
			_ = db.ScanLeaves(tb, leaves, func(r *Row) error { rows++; return nil })
			if rows > cells {
				t.Fatalf("table %s: %d rows scanned from leaves that count %d", tb.Name, rows, cells)
			}
		}
	})
}

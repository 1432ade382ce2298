package sqlfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestLeavesTwice writes a table of a three-level B-tree, checks that
// Leaves lists its rows, then points one child of the root at another
// child's subtree: its pages are reached twice, by the same goroutine or
// two, and Leaves must say so with a CorruptError, every time the same.
func TestLeavesTwice(t *testing.T) {
	var f memFile
	w, err := NewWriter(&f, 512)
	if err != nil {
		t.Fatal(err)
	}
	tw, err := w.Create("T", "CREATE TABLE T (id INTEGER PRIMARY KEY, n INTEGER, s TEXT)")
	if err != nil {
		t.Fatal(err)
	}
	const rows = 20000
	for i := 1; i <= rows; i++ {
		if err := tw.Append(int64(i), AppendRecord(nil, []Value{{}, {Type: Integer, Int: int64(i)}, {Type: Text, Bytes: []byte(fmt.Sprint("row ", i))}})); err != nil {
			t.Fatal(err)
		}
	}
	db := closeOpen(t, w, &f)
	tb := db.Table("T")
	leaves, err := db.Leaves(tb)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i, l := range leaves {
		n += l.Cells
		if i > 0 && l.Page <= leaves[i-1].Page {
			t.Fatalf("leaf %d is page %d, after page %d: not in key order", i, l.Page, leaves[i-1].Page)
		}
	}
	if n != rows {
		t.Fatalf("leaves count %d rows, want %d", n, rows)
	}
	root := f.b[int(tb.root-1)*512:][:512]
	if root[0] != 0x05 {
		t.Fatalf("root page type %#x, want interior (5)", root[0])
	}
	// The right-most child becomes the first child again.
	first := binary.BigEndian.Uint16(root[12:])
	copy(root[8:12], root[first:first+4])
	var msgs []string
	for range 5 {
		_, err := db.Leaves(tb)
		var ce *CorruptError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "twice") {
			t.Fatalf("a subtree reached twice: %v, want a CorruptError that says so", err)
		}
		msgs = append(msgs, err.Error())
	}
	for _, m := range msgs[1:] {
		if m != msgs[0] {
			t.Fatalf("errors differ from one run to the next: %q, %q", msgs[0], m)
		}
	}
}

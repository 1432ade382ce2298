package ingest

// Writing Nsight Systems exports made from real ones: many copies of one
// export's events (a benchmark input of any size, fixtures/gen -class
// nsys), or several exports merged as processes of one (a multi-process
// run, for tests).

import (
	"fmt"
	"io"
	"strings"

	"github.com/tracelens/tracelens/ingest/internal/sqlfile"
)

// NsysSource is one export that WriteNsys takes rows from.
type NsysSource struct {
	R    io.ReaderAt
	Size int64
	// Copies is how many times its event rows (kernels, CUDA API calls,
	// copies, memsets, NVTX) are written, each copy after the previous
	// one in time, with its own correlation ids (at least 1).
	Copies int
	// PID, when positive, replaces the process id packed in its
	// globalPid and globalTid values (bits 24-47), to make it another
	// process of the export written.
	PID int64
}

// NsysStats says what WriteNsys wrote.
type NsysStats struct {
	// Rows counts the rows written per table.
	Rows map[string]int
	// Kernels is the number of kernel rows written.
	Kernels int
}

// nsysReplicated are the tables whose rows every copy repeats.
var nsysReplicated = map[string]bool{tabKernel: true, tabRuntime: true, tabMemcpy: true, tabMemset: true, tabNVTX: true}

// nsysPerProcess are the tables every source contributes once.
var nsysPerProcess = map[string]bool{"PROCESSES": true, "ThreadNames": true, "TARGET_INFO_CUDA_STREAM": true}

// nsysStringCols are the columns that hold StringIds ids.
var nsysStringCols = map[string]bool{"demangledName": true, "shortName": true, "mangledName": true, "nameId": true, "textId": true, "jsonTextId": true}

// NsysEventBytes estimates how many bytes one copy of the source's
// events takes in an export WriteNsys writes (to choose Copies for a
// target size).
func NsysEventBytes(src NsysSource) (int64, error) {
	db, err := sqlfile.Open(src.R, src.Size)
	if err != nil {
		return 0, err
	}
	var n int64
	vals := []sqlfile.Value{}
	var rec []byte
	for _, t := range db.Tables() {
		if !nsysReplicated[t.Name] {
			continue
		}
		err := db.Scan(t, func(r *sqlfile.Row) error {
			vals = rowValues(r, t, vals[:0])
			rec = sqlfile.AppendRecord(rec[:0], vals)
			n += int64(len(rec)) + 8 // the cell's varints and pointer
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}

// rowValues appends the values of every column of t in r to vals.
func rowValues(r *sqlfile.Row, t *sqlfile.Table, vals []sqlfile.Value) []sqlfile.Value {
	for i := range t.Columns {
		vals = append(vals, r.Value(i))
	}
	return vals
}

// WriteNsys writes to w (a new, empty file) an Nsight Systems export
// made of the sources: StringIds of all of them (the ids of each after
// the first moved past the previous ones'), their event rows Copies times
// each, PROCESSES and ThreadNames of each, and every other table of the
// first source as it is. The writer writes no index: indexes are left
// out, and tables that a constraint indexes (none that the reader reads).
func WriteNsys(w io.WriterAt, sources []NsysSource) (*NsysStats, error) {
	if len(sources) == 0 {
		return nil, fmt.Errorf("no source export")
	}
	g := &nsysGen{stats: &NsysStats{Rows: map[string]int{}}}
	for _, s := range sources {
		gs, err := newGenSource(s)
		if err != nil {
			return nil, err
		}
		g.srcs = append(g.srcs, gs)
	}
	first := g.srcs[0].db
	wr, err := sqlfile.NewWriter(w, first.PageSize())
	if err != nil {
		return nil, err
	}
	g.wr = wr
	if err := g.strings(); err != nil {
		return nil, err
	}
	for _, t := range first.Tables() {
		if t.Indexed || strings.EqualFold(t.Name, tabStrings) {
			continue
		}
		if err := g.table(t); err != nil {
			return nil, fmt.Errorf("writing table %s: %w", t.Name, err)
		}
	}
	if err := wr.Close(); err != nil {
		return nil, err
	}
	g.stats.Kernels = g.stats.Rows[tabKernel]
	return g.stats, nil
}

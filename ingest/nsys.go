package ingest

// Nsight Systems SQLite exports (nsys export --type sqlite, nsys profile
// --export=sqlite): the tables are read with sqlfile's B-tree walker and
// mapped into the model. The schema differs between nsys versions (see
// shared/traces/nsys/README.md): columns are found by name, tables and
// columns that are absent are said in the trace's warnings, and rows
// whose values have the wrong type are skipped and counted.

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/tracelens/tracelens/ingest/internal/sqlfile"
	"github.com/tracelens/tracelens/trace"
)

// The nsys tables the reader maps.
const (
	tabKernel  = "CUPTI_ACTIVITY_KIND_KERNEL"
	tabRuntime = "CUPTI_ACTIVITY_KIND_RUNTIME"
	tabMemcpy  = "CUPTI_ACTIVITY_KIND_MEMCPY"
	tabMemset  = "CUPTI_ACTIVITY_KIND_MEMSET"
	tabNVTX    = "NVTX_EVENTS"
	tabStrings = "StringIds"
)

// isSQLite reports whether b starts with the SQLite file header.
func isSQLite(b []byte) bool {
	return len(b) >= len(sqlfile.Magic) && string(b[:len(sqlfile.Magic)]) == sqlfile.Magic
}

// nsysReader builds a trace from one export.
type nsysReader struct {
	db      *sqlfile.DB
	t       *trace.Trace
	m       *merger
	strs    map[int64]string
	threads map[int64]trace.Index // by globalTid
	pnames  map[int64]string      // process names by pid
	tnames  map[int64]string      // thread names by globalTid
	absent  []string
	// workers is how many goroutines read an event table.
	workers int
	// torch notes NVTX ranges from PyTorch (aten:: ops, emit_nvtx).
	torch bool
	// lastTid and lastThread cache thread's last answer: rows of one
	// thread come in runs.
	lastTid    int64
	lastThread trace.Index
	// used notes the devices GPU work ran on.
	used map[int32]bool
	// split asks for a trace per process that ran GPU work (parts,
	// when there are several); gpuPid holds each GPU record's pid.
	split bool
	// kernelsOnly leaves out all but the kernels (nsysOptions).
	kernelsOnly bool
	gpuPid      []int32
	parts       []*trace.Trace
}

// nsysOptions tune the reading of one export.
type nsysOptions struct {
	workers int
	// split asks for one trace per process that ran GPU work.
	split bool
	// kernelsOnly reads the kernels and what names and places them
	// (strings, processes, devices) and only counts the rows of the other
	// event tables (Options.KernelsOnly).
	kernelsOnly bool
}

// readNsys reads an Nsight Systems SQLite export of size bytes from r.
func readNsys(r io.ReaderAt, size int64, workers int) (*trace.Trace, error) {
	ts, err := readNsysAll(r, size, nsysOptions{workers: workers})
	if err != nil {
		return nil, err
	}
	return ts[0], nil
}

// readNsysAll reads an export as one trace, or, with no.split and GPU
// work from several processes, as one trace per such process.
func readNsysAll(r io.ReaderAt, size int64, no nsysOptions) (ts []*trace.Trace, err error) {
	defer func() {
		if p := recover(); p != nil {
			ts, err = nil, fmt.Errorf("internal error reading the Nsight Systems export: %v", p)
		}
	}()
	db, err := sqlfile.Open(r, size)
	if err != nil {
		if errors.Is(err, sqlfile.ErrNotSQLite) {
			return nil, &FormatError{Msg: err.Error()}
		}
		return nil, err
	}
	if db.Table(tabStrings) == nil || db.Table(tabKernel) == nil && db.Table(tabRuntime) == nil && db.Table(tabNVTX) == nil && db.Table("TARGET_INFO_GPU") == nil {
		return nil, &FormatError{Msg: "a SQLite database, but not an Nsight Systems export: an export has a StringIds table and " +
			tabKernel + ", " + tabRuntime + ", " + tabNVTX + " or TARGET_INFO_GPU; this one has " + tableList(db, 8)}
	}
	m := newMerger(1, 0, -1)
	nr := &nsysReader{db: db, t: m.t, m: m, threads: map[int64]trace.Index{}, pnames: map[int64]string{}, tnames: map[int64]string{}, used: map[int32]bool{}, lastThread: trace.None, workers: no.workers, split: no.split, kernelsOnly: no.kernelsOnly}
	if nr.workers <= 0 {
		nr.workers = runtime.GOMAXPROCS(0)
	}
	if err := nr.read(); err != nil {
		return nil, err
	}
	if nr.parts != nil {
		return nr.parts, nil
	}
	return []*trace.Trace{nr.t}, nil
}

// tableList names up to n of db's tables.
func tableList(db *sqlfile.DB, n int) string {
	var names []string
	for _, t := range db.Tables() {
		names = append(names, t.Name)
	}
	if len(names) == 0 {
		return "none"
	}
	if len(names) > n {
		return strings.Join(names[:n], ", ") + fmt.Sprintf(" and %d more", len(names)-n)
	}
	return strings.Join(names, ", ")
}

func (nr *nsysReader) read() error {
	t := nr.t
	t.Meta.Format = "nsys"
	steps := []func() error{nr.readStrings, nr.metadata, nr.names, nr.runtime, nr.gpuTables, nr.nvtx, nr.devices}
	if nr.kernelsOnly {
		steps = []func() error{nr.readStrings, nr.metadata, nr.names, nr.countRuntime, nr.kernels, nr.countNVTX, nr.devices}
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	t.Meta.Framework = nr.framework()
	if len(nr.absent) > 0 {
		t.Warnings = append(t.Warnings, "tables absent, read as empty (nsys leaves out tables without rows): "+strings.Join(nr.absent, ", "))
	}
	m := nr.m
	nr.sortGPU()
	m.gpuSorted = true
	m.sortAll()
	nr.link()
	if nr.split && nr.splitProcesses() {
		return nil
	}
	m.nest()
	m.steps()
	for reason, c := range m.skips {
		t.Skipped = append(t.Skipped, trace.Skip{Reason: reason, Count: c.count, FirstOffset: c.first})
	}
	slices.SortFunc(t.Skipped, func(a, b trace.Skip) int { return strings.Compare(a.Reason, b.Reason) })
	if modelled(t) == 0 && !nr.kernelsOnly {
		t.Warnings = append(t.Warnings, "the export holds no kernels, copies, CUDA API calls or NVTX ranges: nothing to analyze")
	}
	return nil
}

// framework tells a Python program from a native one: PyTorch when NVTX
// ranges or kernel names show it (aten:: ranges, at::native kernels),
// Python when a process that made CUDA calls or NVTX ranges is a Python
// interpreter, else a CUDA C/C++ program (whose findings then suggest
// cuBLAS and CUDA graphs, not torch.compile).
func (nr *nsysReader) framework() string {
	if nr.torch {
		return "PyTorch"
	}
	// Names are interned and a kernel is mostly launched many times in a
	// row: a name just checked is not searched again (two searches per
	// launch took 0.12 s on 3.2 M kernels).
	last := ""
	for i := range nr.t.GPU {
		g := &nr.t.GPU[i]
		if g.Kind != trace.Kernel || g.Name == last {
			continue
		}
		last = g.Name
		if strings.Contains(g.Name, "at::native::") || strings.Contains(g.Name, "at::cuda::") {
			return "PyTorch"
		}
	}
	for _, th := range nr.t.Threads {
		pid, _ := strconv.ParseInt(th.PID, 10, 64)
		name := nr.pnames[pid]
		if i := strings.LastIndexAny(name, "/\\"); i >= 0 {
			name = name[i+1:]
		}
		switch name = strings.ToLower(name); {
		case strings.HasPrefix(name, "python"), strings.HasPrefix(name, "pytest"), strings.HasPrefix(name, "ipython"), name == "torchrun":
			return "Python"
		}
	}
	return trace.FrameworkCUDA
}

// cols binds a table's columns by name. A missing required column makes
// the table unreadable (a warning says so and ok is false); a missing
// optional one reads as absent, with a warning naming what is lost.
type cols struct {
	tab *sqlfile.Table
	idx map[string]int
	// names are the columns asked for, required then optional; order
	// their indexes (-1: absent), which ints reads rows by.
	names []string
	order []int
}

// open finds table name and binds its columns: required ones must all be
// present; optional ones may be missing (named in one warning when lost
// says what they carry). A table that is absent is noted, not an error.
func (nr *nsysReader) open(name string, required, optional []string, lost string) (*cols, bool) {
	tab := nr.db.Table(name)
	if tab == nil {
		nr.absent = append(nr.absent, name)
		return nil, false
	}
	c := &cols{tab: tab, idx: map[string]int{}}
	var missing []string
	for _, n := range required {
		if i := tab.Column(n); i >= 0 {
			c.idx[n] = i
		} else {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		nr.t.Warnings = append(nr.t.Warnings, fmt.Sprintf("%s lacks the column(s) %s: its rows were not read", name, strings.Join(missing, ", ")))
		return nil, false
	}
	var lostCols []string
	for _, n := range optional {
		if i := tab.Column(n); i >= 0 {
			c.idx[n] = i
		} else {
			c.idx[n] = -1
			if lost != "" {
				lostCols = append(lostCols, n)
			}
		}
	}
	c.names = append(append(c.names, required...), optional...)
	for _, n := range c.names {
		c.order = append(c.order, c.idx[n])
	}
	if len(lostCols) > 0 {
		nr.t.Warnings = append(nr.t.Warnings, fmt.Sprintf("%s lacks the column(s) %s: %s", name, strings.Join(lostCols, ", "), lost))
	}
	return c, true
}

// scan reads every row of c's table, serially: the small tables that
// describe the events (the event tables are read by scanEvents).
func (nr *nsysReader) scan(c *cols, fn func(r *sqlfile.Row) error) error {
	if err := nr.db.Scan(c.tab, fn); err != nil {
		return fmt.Errorf("reading table %s: %w", c.tab.Name, err)
	}
	return nil
}

// str returns the string a StringIds id names.
func (nr *nsysReader) str(id int64) string { return nr.strs[id] }

func (nr *nsysReader) readStrings() error {
	nr.strs = map[int64]string{}
	c, ok := nr.open(tabStrings, []string{"id", "value"}, nil, "")
	if !ok {
		return nil
	}
	vi := c.idx["value"]
	return nr.scan(c, func(r *sqlfile.Row) error {
		id, ok := r.Int(c.idx["id"])
		if !ok {
			id = r.Rowid
		}
		nr.strs[id] = string(r.Text(vi))
		return nil
	})
}

// thread returns the model's thread for an nsys globalTid, made on first
// use: pid and tid are bits 24-47 and 0-23 (the bits above hold a
// hardware/VM id, which differs between Linux and Windows exports).
func (nr *nsysReader) thread(gtid int64) trace.Index {
	if gtid == nr.lastTid && nr.lastThread != trace.None {
		return nr.lastThread
	}
	if i, ok := nr.threads[gtid]; ok {
		nr.lastTid, nr.lastThread = gtid, i
		return i
	}
	pid, tid := gtid>>24&0xFFFFFF, gtid&0xFFFFFF
	name := nr.tnames[gtid]
	if name == "" {
		name = nr.pnames[pid]
	}
	i := trace.Index(len(nr.t.Threads))
	nr.t.Threads = append(nr.t.Threads, trace.Thread{PID: strconv.FormatInt(pid, 10), TID: strconv.FormatInt(tid, 10), Name: name})
	nr.threads[gtid] = i
	return i
}

// names reads process and thread names.
func (nr *nsysReader) names() error {
	if c, ok := nr.open("PROCESSES", []string{"globalPid", "name"}, nil, ""); ok {
		err := nr.scan(c, func(r *sqlfile.Row) error {
			if g, ok := r.Int(c.idx["globalPid"]); ok {
				nr.pnames[g>>24&0xFFFFFF] = string(r.Text(c.idx["name"]))
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if c, ok := nr.open("ThreadNames", []string{"nameId", "globalTid"}, nil, ""); ok {
		return nr.scan(c, func(r *sqlfile.Row) error {
			g, ok1 := r.Int(c.idx["globalTid"])
			id, ok2 := r.Int(c.idx["nameId"])
			if ok1 && ok2 {
				nr.tnames[g] = nr.str(id)
			}
			return nil
		})
	}
	return nil
}

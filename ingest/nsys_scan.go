package ingest

import (
	"fmt"
	"sync"

	"github.com/tracelens/tracelens/ingest/internal/sqlfile"
	"github.com/tracelens/tracelens/trace"
)

// nsWorker is one goroutine's share of reading an event table: it keeps
// what it notes besides records (skips, devices used) to itself until
// scanEvents merges the shares in table order, so the model is the same
// whatever the number of workers.
type nsWorker struct {
	nr    *nsysReader
	c     *cols
	v     []int64 // the row's integer columns, as c.names orders them
	rows  int
	skips map[string]*skipCount
	used  map[int32]bool
	// gtid is the globalTid of the record last made, for the tables
	// whose records scanEvents gives a side array of them.
	gtid int64
	// apiNames caches API names by StringIds id (small: a slice, as a
	// map lookup per row was a tenth of reading RUNTIME), copyNames
	// memcpy names by kind, intern NVTX texts.
	apiNames  []string
	apiKnown  []bool
	copyNames map[[3]uint8]string
	intern    map[string]string
	idTexts   map[int64]string
	// threadNames and torch are what NVTX_EVENTS says besides ranges.
	threadNames map[int64]string
	torch       bool
	// unresolved counts rows whose name's StringIds id StringIds lacks.
	unresolved int
}

// name returns the string StringIds id names, or, when StringIds lacks
// it, a name that says so (counted, and said in a warning).
func (w *nsWorker) name(id int64, what string) string {
	if s, ok := w.nr.strs[id]; ok {
		return s
	}
	w.unresolved++
	return fmt.Sprintf("%s with unknown name (StringIds id %d)", what, id)
}

func (w *nsWorker) skip(reason string, off int64) {
	if s, ok := w.skips[reason]; ok {
		s.count++
		s.first = min(s.first, off)
		return
	}
	w.skips[reason] = &skipCount{count: 1, first: off}
}

// ints reads the integer columns open bound (c.names) of r into w.v; ok
// is false (and the row is counted as skipped) if a present column holds
// a value that is not an integer, or one of the first required is NULL.
func (w *nsWorker) ints(r *sqlfile.Row, required int) bool {
	for k, i := range w.c.order {
		v, ok := r.Int(i)
		if !ok {
			if k >= required && (i < 0 || r.Type(i) == sqlfile.Null) {
				w.v[k] = 0
				continue
			}
			what := "NULL"
			if i >= 0 && r.Type(i) != sqlfile.Null {
				what = "a " + r.Type(i).String()
			}
			w.skip(fmt.Sprintf("%s row whose %s is %s", w.c.tab.Name, w.c.names[k], what), r.Offset)
			return false
		}
		w.v[k] = v
	}
	return true
}

// eventTable is an event table planned for reading: its leaf pages and
// the rows they hold, an upper bound on its records, so that the model's
// slices are made once at their size instead of grown by appending (which
// copied each record several times and left the old arrays as garbage).
type eventTable struct {
	c      *cols
	leaves []sqlfile.Leaf
	rows   int
}

// plan lists the leaves of c's table (nil c: no table, no rows).
func (nr *nsysReader) plan(c *cols) (*eventTable, error) {
	e := &eventTable{c: c}
	if c == nil {
		return e, nil
	}
	var err error
	if e.leaves, err = nr.db.Leaves(c.tab); err != nil {
		return nil, fmt.Errorf("reading table %s: %w", c.tab.Name, err)
	}
	for _, l := range e.leaves {
		e.rows += l.Cells
	}
	return e, nil
}

// share is one goroutine's run of leaves and where its records go.
type share struct {
	leaves []sqlfile.Leaf
	at, n  int // first index in dst, records made
}

// shares splits e's leaves into up to n runs of about equal rows.
func (e *eventTable) shares(n int) []share {
	n = max(1, min(n, len(e.leaves)))
	var out []share
	first, rows := 0, 0
	for i, l := range e.leaves {
		rows += l.Cells
		if i == len(e.leaves)-1 || rows >= (len(out)+1)*e.rows/n && len(out) < n-1 {
			at := 0
			if len(out) > 0 {
				last := out[len(out)-1]
				at = last.at + cellsOf(last.leaves)
			}
			out = append(out, share{leaves: e.leaves[first : i+1], at: at})
			first = i + 1
		}
	}
	return out
}

func cellsOf(leaves []sqlfile.Leaf) int {
	n := 0
	for _, l := range leaves {
		n += l.Cells
	}
	return n
}

// scanEvents reads event table e into dst (at least e.rows long) with up
// to nr.workers goroutines, each over a key-ordered share of its leaves
// and into its own part of dst: each decodes a row into *out and says
// whether it made a record. The records are then moved together, in
// table order, and their number returned; gtids, if not nil (as long as
// dst), gets each record's w.gtid alongside. Skips, devices and row
// counts are merged here; the workers come back for what else they noted.
func scanEvents[T any](nr *nsysReader, e *eventTable, dst []T, gtids []int64, each func(w *nsWorker, r *sqlfile.Row, out *T) bool) (int, []*nsWorker, error) {
	c := e.c
	shares := e.shares(nr.workers)
	ws := make([]*nsWorker, len(shares))
	errs := make([]error, len(shares))
	var wg sync.WaitGroup
	for i := range shares {
		w := &nsWorker{nr: nr, c: c, v: make([]int64, len(c.order)), skips: map[string]*skipCount{},
			used: map[int32]bool{}, copyNames: map[[3]uint8]string{}, intern: map[string]string{}, idTexts: map[int64]string{}, threadNames: map[int64]string{}}
		ws[i] = w
		wg.Add(1)
		go func(sh *share) {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					errs[i] = fmt.Errorf("internal error: %v", p)
				}
			}()
			out := dst[sh.at : sh.at+cellsOf(sh.leaves)]
			errs[i] = nr.db.ScanLeaves(c.tab, sh.leaves, func(r *sqlfile.Row) error {
				w.rows++
				if each(w, r, &out[sh.n]) {
					if gtids != nil {
						gtids[sh.at+sh.n] = w.gtid
					}
					sh.n++
				}
				return nil
			})
		}(&shares[i])
	}
	wg.Wait()
	n := 0
	for i, sh := range shares {
		if errs[i] != nil {
			return 0, nil, fmt.Errorf("reading table %s: %w", c.tab.Name, errs[i])
		}
		if sh.at != n {
			copy(dst[n:], dst[sh.at:sh.at+sh.n])
			if gtids != nil {
				copy(gtids[n:], gtids[sh.at:sh.at+sh.n])
			}
		}
		n += sh.n
	}
	nr.mergeWorkers(c, ws)
	return n, ws, nil
}

// mergeWorkers adds up what the workers of table c noted: skips, devices
// used, unresolved names, rows.
func (nr *nsysReader) mergeWorkers(c *cols, ws []*nsWorker) {
	rows, unresolved := 0, 0
	for _, w := range ws {
		rows += w.rows
		for reason, s := range w.skips {
			if m, ok := nr.m.skips[reason]; ok {
				m.count += s.count
				m.first = min(m.first, s.first)
			} else {
				nr.m.skips[reason] = s
			}
		}
		for d := range w.used {
			nr.used[d] = true
		}
		unresolved += w.unresolved
	}
	if unresolved > 0 {
		rows := fmt.Sprintf("%d rows name", unresolved)
		if unresolved == 1 {
			rows = "1 row names"
		}
		nr.t.Warnings = append(nr.t.Warnings, fmt.Sprintf("%s: %s a StringIds id that StringIds lacks: named by the id", c.tab.Name, rows))
	}
	nr.t.Events += rows
	if rows > 0 {
		nr.t.Categories = append(nr.t.Categories, trace.CategoryCount{Category: c.tab.Name, Count: rows})
	}
}

// appendAll appends src to dst, taking src itself when dst is empty (the
// records of a large table are not copied once more).
func appendAll[T any](dst, src []T) []T {
	if len(dst) == 0 {
		return src
	}
	return append(dst, src...)
}

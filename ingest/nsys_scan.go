package ingest

import (
	"fmt"
	"sync"

	"github.com/tracelens/tracelens/ingest/internal/sqlfile"
	"github.com/tracelens/tracelens/trace"
)

// nsWorker is one goroutine's share of reading an event table: it keeps
// what it reads (records, skips, devices used, the globalTid of each host
// record) to itself until scanEvents merges the shares in table order,
// so the model is the same whatever the number of workers.
type nsWorker struct {
	nr    *nsysReader
	c     *cols
	v     []int64 // the row's integer columns, as c.names orders them
	rows  int
	skips map[string]*skipCount
	used  map[int32]bool
	// gtids holds the globalTid of each host record appended, in order;
	// threads are made from them serially, in table order.
	gtids []int64
	// apiNames caches API names by StringIds id (small: a slice, as a
	// map lookup per row was a tenth of reading RUNTIME), copyNames
	// memcpy names by kind, intern NVTX texts.
	apiNames  []string
	apiKnown  []bool
	copyNames map[[3]uint8]string
	intern    map[string]string
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

// scanEvents reads event table c with up to nr.workers goroutines, each
// over a key-ordered part of the table; each appends a row's records to
// out. The records come back in table order, with the workers (for their
// gtids and the like); skips, devices and row counts are merged here.
func scanEvents[T any](nr *nsysReader, c *cols, each func(w *nsWorker, r *sqlfile.Row, out []T) []T) ([]T, []*nsWorker, error) {
	parts, err := nr.db.Partitions(c.tab, nr.workers)
	if err != nil {
		return nil, nil, fmt.Errorf("reading table %s: %w", c.tab.Name, err)
	}
	ws := make([]*nsWorker, len(parts))
	outs := make([][]T, len(parts))
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i, p := range parts {
		w := &nsWorker{nr: nr, c: c, v: make([]int64, len(c.order)), skips: map[string]*skipCount{},
			used: map[int32]bool{}, copyNames: map[[3]uint8]string{}, intern: map[string]string{}, threadNames: map[int64]string{}}
		ws[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					errs[i] = fmt.Errorf("internal error: %v", p)
				}
			}()
			errs[i] = nr.db.ScanPart(p, func(r *sqlfile.Row) error {
				w.rows++
				outs[i] = each(w, r, outs[i])
				return nil
			})
		}()
	}
	wg.Wait()
	n, rows, unresolved := 0, 0, 0
	for i, w := range ws {
		if errs[i] != nil {
			return nil, nil, fmt.Errorf("reading table %s: %w", c.tab.Name, errs[i])
		}
		n += len(outs[i])
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
	out := outs[0]
	if len(outs) > 1 {
		out = make([]T, 0, n)
		for _, o := range outs {
			out = append(out, o...)
		}
	}
	nr.t.Events += rows
	if rows > 0 {
		nr.t.Categories = append(nr.t.Categories, trace.CategoryCount{Category: c.tab.Name, Count: rows})
	}
	return out, ws, nil
}

// appendAll appends src to dst, taking src itself when dst is empty (the
// records of a large table are not copied once more).
func appendAll[T any](dst, src []T) []T {
	if len(dst) == 0 {
		return src
	}
	return append(dst, src...)
}

// threadsOf gives records their threads from the workers' gtids, in
// table order, so threads are numbered as a serial read would number
// them; set(i, thread) stores record i's.
func (nr *nsysReader) threadsOf(ws []*nsWorker, set func(i int, th trace.Index)) {
	k := 0
	for _, w := range ws {
		for _, g := range w.gtids {
			set(k, nr.thread(g))
			k++
		}
	}
}

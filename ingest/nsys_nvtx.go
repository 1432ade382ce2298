package ingest

import (
	"slices"
	"strings"

	"github.com/tracelens/tracelens/ingest/internal/sqlfile"
	"github.com/tracelens/tracelens/trace"
)

// NVTX event types (ENUM_NSYS_EVENT_TYPE; the same ids in exports
// without ENUM tables).
const (
	nvtxMark       = 34
	nvtxThreadName = 39
	nvtxPushPop    = 59
	nvtxStartEnd   = 60
	nvtxDomain     = 75
)

var nvtxCols = []string{"start", "eventType", "end", "globalTid", "textId", "domainId"}

// nvtx reads NVTX_EVENTS: push/pop and start/end ranges become
// annotations on the thread that opened them (so a repeated top-level
// range gives the steps, as record_function ranges do), with their text
// inline or a StringIds id; thread names name threads. Marks and ranges
// that never ended are counted as skipped.
func (nr *nsysReader) nvtx() error {
	e, err := nr.planNVTX()
	if err != nil || e.c == nil {
		return err
	}
	c := e.c
	ti := c.tab.Column("text")
	ranges := make([]trace.Annotation, e.rows)
	gtids := make([]int64, e.rows)
	n, ws, err := scanEvents(nr, e, ranges, gtids, func(w *nsWorker, r *sqlfile.Row, out *trace.Annotation) bool {
		return w.nvtxRow(r, ti, out)
	})
	if err != nil {
		return err
	}
	// Not every row is a range (domains, marks, thread names): a
	// slice much longer than its ranges is not kept.
	ranges = ranges[:n]
	if n < e.rows*3/4 {
		ranges = slices.Clone(ranges)
	}
	for i := range ranges {
		ranges[i].Thread = nr.thread(gtids[i])
	}
	nr.t.Annotations = appendAll(nr.t.Annotations, ranges)
	for _, w := range ws {
		for gtid, name := range w.threadNames {
			if i, ok := nr.threads[gtid]; ok && nr.t.Threads[i].Name == "" {
				nr.t.Threads[i].Name = name
			}
		}
		nr.torch = nr.torch || w.torch
	}
	return nil
}

// planNVTX binds and plans the NVTX table; without it, or without the
// columns a range needs, e.c is nil (noted).
func (nr *nsysReader) planNVTX() (*eventTable, error) {
	c, ok := nr.open(tabNVTX, nvtxCols[:2], nvtxCols[2:], "")
	if ok && (c.idx["globalTid"] < 0 || c.idx["end"] < 0) {
		nr.t.Warnings = append(nr.t.Warnings, tabNVTX+" lacks the end or globalTid column: its ranges were not read")
		c = nil
	}
	return nr.plan(c)
}

// nvtxRow reads one NVTX_EVENTS row (text in column ti): a range goes to
// *out (its globalTid to w.gtid), a thread name is noted.
func (w *nsWorker) nvtxRow(r *sqlfile.Row, ti int, out *trace.Annotation) bool {
	v, order := w.v, w.c.order
	if !w.ints(r, 2) {
		return false
	}
	kind := v[1]
	if kind != nvtxPushPop && kind != nvtxStartEnd && kind != nvtxThreadName {
		switch kind {
		case nvtxMark:
			w.skip("NVTX marks (instants: not modelled)", r.Offset)
		case nvtxDomain:
		default:
			w.skip("NVTX events of other types", r.Offset)
		}
		return false
	}
	name := w.nvtxText(r, ti)
	if r.Type(order[3]) != sqlfile.Integer {
		w.skip("NVTX ranges without a thread", r.Offset)
		return false
	}
	if kind == nvtxThreadName {
		w.threadNames[v[3]] = name
		return false
	}
	if r.Type(order[2]) != sqlfile.Integer || v[2] < v[0] {
		w.skip("NVTX ranges that never ended", r.Offset)
		return false
	}
	w.gtid = v[3]
	*out = trace.Annotation{Span: trace.Span{Name: name, Start: trace.Time(v[0]), End: trace.Time(v[2])}}
	return true
}

// nvtxText returns a row's text, inline (column ti) or a StringIds id,
// interned: the texts of a run repeat, and the lookup allocates nothing.
func (w *nsWorker) nvtxText(r *sqlfile.Row, ti int) string {
	text := r.Text(ti)
	if text == nil && r.Type(w.c.order[4]) == sqlfile.Integer {
		id := w.v[4]
		name, ok := w.idTexts[id]
		if !ok {
			name = w.nr.str(id)
			w.idTexts[id] = name
			w.torch = w.torch || torchRange(name)
		}
		return name
	}
	name, ok := w.intern[string(text)]
	if !ok {
		name = string(text)
		w.intern[name] = name
		w.torch = w.torch || torchRange(name)
	}
	return name
}

// torchRange tells an NVTX range of PyTorch's (an aten:: op, emit_nvtx).
func torchRange(name string) bool {
	return strings.HasPrefix(name, "aten::") || strings.Contains(name, "'mod': 'torch'")
}

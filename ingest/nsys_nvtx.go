package ingest

import (
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
	c, ok := nr.open(tabNVTX, nvtxCols[:2], nvtxCols[2:], "")
	if !ok {
		return nil
	}
	if c.idx["globalTid"] < 0 || c.idx["end"] < 0 {
		nr.t.Warnings = append(nr.t.Warnings, tabNVTX+" lacks the end or globalTid column: its ranges were not read")
		return nil
	}
	ti := c.tab.Column("text")
	intern := map[string]string{}
	threadNames := map[int64]string{}
	torch := false
	v := make([]int64, len(nvtxCols))
	err := nr.scan(c, func(r *sqlfile.Row) error {
		if !nr.ints(c, r, v, 2) {
			return nil
		}
		kind := v[1]
		if kind != nvtxPushPop && kind != nvtxStartEnd && kind != nvtxThreadName {
			switch kind {
			case nvtxMark:
				nr.m.skipAt("NVTX marks (instants: not modelled)", r.Offset)
			case nvtxDomain:
			default:
				nr.m.skipAt("NVTX events of other types", r.Offset)
			}
			return nil
		}
		text := r.Text(ti)
		if text == nil && r.Type(c.order[4]) == sqlfile.Integer {
			text = []byte(nr.str(v[4]))
		}
		name, ok := intern[string(text)]
		if !ok {
			name = string(text)
			intern[name] = name
			torch = torch || strings.HasPrefix(name, "aten::") || strings.Contains(name, "'mod': 'torch'")
		}
		if r.Type(c.order[3]) != sqlfile.Integer {
			nr.m.skipAt("NVTX ranges without a thread", r.Offset)
			return nil
		}
		if kind == nvtxThreadName {
			threadNames[v[3]] = name
			return nil
		}
		if r.Type(c.order[2]) != sqlfile.Integer || v[2] < v[0] {
			nr.m.skipAt("NVTX ranges that never ended", r.Offset)
			return nil
		}
		nr.t.Annotations = append(nr.t.Annotations, trace.Annotation{
			Span:   trace.Span{Name: name, Start: trace.Time(v[0]), End: trace.Time(v[2])},
			Thread: nr.thread(v[3]),
		})
		return nil
	})
	for gtid, name := range threadNames {
		if i, ok := nr.threads[gtid]; ok && nr.t.Threads[i].Name == "" {
			nr.t.Threads[i].Name = name
		}
	}
	if torch {
		nr.t.Meta.Framework = "PyTorch"
	}
	return err
}

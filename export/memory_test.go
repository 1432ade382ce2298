package export_test

import (
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/tracelens/tracelens/export"
)

// TestMemoryTable: a profile_memory trace's memory table holds its
// timeline samples, exactly one marked as the peak with the largest
// allocated total, and the sites live at the peak (the figures of
// expect/issue26_memory.json: 151.1 MiB peak, 16 MiB live from aten::mm
// on memory_leak); a trace without [memory] events has an empty table.
func TestMemoryTable(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	leak := copyFixture(t, "recorded/issue26/memory_leak.json.gz", in, "leak.json.gz")
	plain := copyFixture(t, "fusedlinear_naive.json.gz", in, "plain.json.gz")
	exportAll(t, out, false, leak, plain)
	rows, err := parquet.ReadFile[export.MemoryRow](filepath.Join(out, "memory", "leak.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	var peaks, samples int
	var peak, top int64
	live := map[string]int64{}
	for _, r := range rows {
		switch r.Kind {
		case export.MemorySample:
			samples++
			top = max(top, r.AllocatedBytes)
			if r.ReservedBytes == nil {
				t.Fatalf("sample without reserved bytes: %+v", r)
			}
			if r.Peak {
				peaks++
				peak = r.AllocatedBytes
			}
		case export.MemoryPeakLive:
			live[*r.Op] += r.AllocatedBytes
		}
	}
	if samples == 0 || peaks != 1 || peak != top || peak != 158390784 {
		t.Errorf("%d samples, %d marked peak at %d bytes (highest %d), want one at 158390784", samples, peaks, peak, top)
	}
	if live["aten::mm"] != 16777216 || live["aten::addmm"] != 8388608 {
		t.Errorf("live at the peak by op: %v", live)
	}
	empty, err := parquet.ReadFile[export.MemoryRow](filepath.Join(out, "memory", "plain.parquet"))
	if err != nil || len(empty) != 0 {
		t.Errorf("plain trace: %d memory rows, %v", len(empty), err)
	}
}

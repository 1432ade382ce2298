package analyze

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// memPeakExpected is one device of expect/issue26_memory.json.
type memPeakExpected struct {
	Peak          int64 `json:"peak_allocated"`
	Reserved      int64 `json:"reserved_at_peak"`
	Fragmentation int64 `json:"fragmentation"`
	LiveBytes     int64 `json:"live_bytes"`
	LiveByOp      map[string]struct {
		Bytes  int64 `json:"bytes"`
		Blocks int   `json:"blocks"`
	} `json:"live_by_op"`
}

// TestMemoryTimelineRecorded: on the profile_memory traces the peak, the
// reserved total and fragmentation at it, and the allocations live at the
// peak by op are the independent script's (issue26.py memory_peak).
func TestMemoryTimelineRecorded(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "fixtures", "recorded", "expect", "issue26_memory.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp map[string]map[string]memPeakExpected
	if err := json.Unmarshal(b, &exp); err != nil {
		t.Fatal(err)
	}
	for name, devs := range exp {
		r := run(t, name)
		if r.Memory == nil {
			t.Fatalf("%s: no memory timeline", name)
		}
		if len(r.Memory.Devices) != len(devs) {
			t.Fatalf("%s: %d devices, script %d", name, len(r.Memory.Devices), len(devs))
		}
		for _, d := range r.Memory.Devices {
			e := devs[strconv.Itoa(d.Device)]
			if d.PeakAllocatedBytes != e.Peak || d.ReservedAtPeakBytes != e.Reserved || d.FragmentationBytes != e.Fragmentation {
				t.Errorf("%s: peak %d reserved %d fragmentation %d, script %d %d %d", name,
					d.PeakAllocatedBytes, d.ReservedAtPeakBytes, d.FragmentationBytes, e.Peak, e.Reserved, e.Fragmentation)
			}
			if got := d.PeakAllocatedBytes - d.PeakUnattributedBytes; got != e.LiveBytes {
				t.Errorf("%s: %d bytes live at the peak, script %d", name, got, e.LiveBytes)
			}
			byOp := map[string]int64{}
			blocks := map[string]int{}
			for _, s := range d.PeakLive {
				byOp[s.Op] += s.Bytes
				blocks[s.Op] += s.Blocks
			}
			for op, w := range e.LiveByOp {
				if byOp[op] != w.Bytes || blocks[op] != w.Blocks {
					t.Errorf("%s: live at peak from %s: %d bytes in %d blocks, script %d in %d", name, op, byOp[op], blocks[op], w.Bytes, w.Blocks)
				}
			}
			if len(byOp) != len(e.LiveByOp) {
				t.Errorf("%s: live ops %v, script %v", name, byOp, e.LiveByOp)
			}
			if len(d.Points) == 0 || len(d.Points) > MemoryTimelinePoints {
				t.Errorf("%s: %d timeline points", name, len(d.Points))
			}
			top := int64(0)
			for _, p := range d.Points {
				top = max(top, p.AllocatedBytes)
			}
			if top != d.PeakAllocatedBytes {
				t.Errorf("%s: the timeline's highest point %d is not the peak %d", name, top, d.PeakAllocatedBytes)
			}
		}
	}
	if r := run(t, "recorded/issue26/healthy_small.json.gz"); r.Memory != nil {
		t.Errorf("healthy_small: a memory timeline without [memory] events")
	}
}

package analyze

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fragExpected is one trace of expect/issue26_fragmentation.json.
type fragExpected struct {
	Peak          int64 `json:"peak_allocated"`
	Reserved      int64 `json:"reserved_at_peak"`
	Fragmentation int64 `json:"fragmentation"`
	MaxReserved   int64 `json:"max_reserved"`
	Steps         []struct {
		Allocated     int64 `json:"peak_allocated"`
		Reserved      int64 `json:"reserved"`
		Fragmentation int64 `json:"fragmentation"`
	} `json:"steps"`
}

// TestMemoryFragmentationRecorded: on real profile_memory traces
// (issue26.py fragmentation), memory-fragmentation reports the median
// reserved − allocated at the steady steps' peaks and the reserved memory
// there as the script computes them; it must fire on frag_grow (a
// training step whose sequence grows every step) and frag_holes (blocks
// kept between steps leave holes the next larger requests cannot use),
// and must not on frag_kvcat (19 MiB unused: under the floor),
// memory_leak and memory_steady. memory-growth, which covers leaks, must
// not fire on the fragmentation traces (their memory does not grow from
// step to step).
func TestMemoryFragmentationRecorded(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "fixtures", "recorded", "expect", "issue26_fragmentation.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp map[string]fragExpected
	if err := json.Unmarshal(b, &exp); err != nil {
		t.Fatal(err)
	}
	must := map[string]bool{"frag_grow": true, "frag_holes": true, "frag_kvcat": false, "memory_leak": false, "memory_steady": false}
	for name, want := range exp {
		short := strings.TrimSuffix(filepath.Base(name), ".json.gz")
		fires, ok := must[short]
		if !ok {
			t.Errorf("%s: no must/must-not for it", name)
			continue
		}
		r := run(t, name)
		if d := r.Memory.Devices[0]; d.PeakAllocatedBytes != want.Peak || d.ReservedAtPeakBytes != want.Reserved ||
			d.FragmentationBytes != want.Fragmentation || d.MaxReservedBytes != want.MaxReserved {
			t.Errorf("%s: peak %d reserved %d unused %d max reserved %d, want %+v", name, d.PeakAllocatedBytes, d.ReservedAtPeakBytes,
				d.FragmentationBytes, d.MaxReservedBytes, want)
		}
		var waste, reserved []float64
		for _, s := range want.Steps[1:] {
			waste, reserved = append(waste, float64(s.Fragmentation)), append(reserved, float64(s.Reserved))
		}
		w, res := median(waste), median(reserved)
		if expect := w >= MemoryFragmentationMinBytes && w >= MemoryFragmentationMinShare*res; expect != fires {
			t.Errorf("%s: the thresholds say %v (%.0f of %.0f bytes unused), the must/must-not list %v", name, expect, w, res, fires)
		}
		f := findingOf(r, "memory-fragmentation")
		if (f != nil) != fires {
			t.Errorf("%s: memory-fragmentation %v, want %v", name, f != nil, fires)
			continue
		}
		if strings.HasPrefix(short, "frag_") && findingOf(r, "memory-growth") != nil {
			t.Errorf("%s: memory-growth on a trace whose memory does not grow", name)
		}
		if f == nil {
			continue
		}
		got := func(label string) float64 {
			i := slices.IndexFunc(f.Measures, func(m Measure) bool { return m.Name == label })
			if i < 0 {
				t.Fatalf("%s: no measure %q", name, label)
			}
			return f.Measures[i].Value.Num
		}
		if got("reserved − allocated at the step's peak") != w || got("reserved at the step's peak") != res {
			t.Errorf("%s: measures %+v, want %.0f unused of %.0f reserved", name, f.Measures, w, res)
		}
	}
}

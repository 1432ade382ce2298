package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
)

// TestOverviewMemory: on a profile_memory trace the overview shows the
// device memory line (the peak, reserved and fragmentation at it, growth
// per step) and the site holding the most at the peak, within the
// screen's width; a trace without [memory] events shows none.
func TestOverviewMemory(t *testing.T) {
	path := filepath.Join("..", "fixtures", "recorded", "issue26", "memory_leak.json.gz")
	load := func(progress func(read, total int64)) (*trace.Trace, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return ingest.Read(f, path, ingest.Options{Progress: progress})
	}
	const w, h = 140, 50
	view := screenAfter(t, Options{Name: "memory_leak", Load: load, Renderer: plainRenderer()}, w, h)
	checkScreen(t, view, w, h)
	for _, want := range []string{"Memory", "peak 151.1 MiB (step #5), reserved 166.0 MiB (14.9 MiB not allocated), 2.0 MiB/step growth",
		"most live at the peak: 16.0 MiB from aten::mm (2 blocks)"} {
		if !strings.Contains(view, want) {
			t.Errorf("overview lacks %q:\n%s", want, view)
		}
	}
	if view := screenAfter(t, fixtureOptions("fusedlinear_naive.json.gz"), w, h); strings.Contains(view, "most live at the peak") {
		t.Errorf("a memory line without [memory] events:\n%s", view)
	}
}

package capture_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/capture"
	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
)

// TestFixturesIngest reads the traces capture recorded on an H100
// (fixtures/capture) with tracelens's own reader: every workload's trace
// must be there, and every kernel and copy must link to its launch call.
func TestFixturesIngest(t *testing.T) {
	names := []string{"launch-overhead-no-per-launch-timing"}
	for _, w := range capture.Workloads() {
		names = append(names, w.Name)
	}
	for _, n := range names {
		path := filepath.Join("..", "fixtures", "capture", n+".json.gz")
		tr, err := ingest.ReadFile(path, ingest.Options{})
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		kernels, copies := 0, 0
		for i := range tr.GPU {
			g := &tr.GPU[i]
			switch g.Kind {
			case trace.Kernel:
				kernels++
			case trace.Memcpy:
				copies++
			}
			if g.Launch == trace.None {
				t.Errorf("%s: GPU record %d is not linked to a launch call", n, i)
			}
		}
		switch {
		case strings.HasPrefix(n, "memcpy"):
			if copies == 0 || kernels != 0 {
				t.Errorf("%s: %d copies, %d kernels", n, copies, kernels)
			}
		case n == "launch-overhead-no-per-launch-timing":
			if kernels != 0 {
				t.Errorf("%s: %d kernels in whole-step mode", n, kernels)
			}
		default:
			if kernels == 0 {
				t.Errorf("%s: no kernels", n)
			}
		}
	}
}

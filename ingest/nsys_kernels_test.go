package ingest

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// TestNsysKernelsOnly reads every shared export whole and kernels-only
// (what `top` asks for) and checks that the kernels-only model has the
// same kernels, in the same order with the same fields, as the full one,
// the kernel count and total of sqlite3's reference, and the same event
// counts (rows of the tables it counted but did not read), device and
// warnings.
func TestNsysKernelsOnly(t *testing.T) {
	for _, ref := range nsysRefs(t) {
		t.Run(ref.file, func(t *testing.T) {
			path := filepath.Join(nsysDir, ref.file)
			full, err := ReadFile(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			ko, err := ReadFile(path, Options{KernelsOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			var want []trace.GPUActivity
			for _, g := range full.GPU {
				if g.Kind == trace.Kernel {
					g.Launch = trace.None // the kernels-only read links nothing
					want = append(want, g)
				}
			}
			var ns int64
			for _, g := range ko.GPU {
				if g.Kind != trace.Kernel {
					t.Fatalf("kernels-only model holds a %v", g.Kind)
				}
				ns += int64(g.Dur())
			}
			if len(ko.GPU) != ref.kernels || ns != ref.kernelNs {
				t.Errorf("kernels-only: %d kernels, %d ns; sqlite3: %d, %d ns", len(ko.GPU), ns, ref.kernels, ref.kernelNs)
			}
			if !slices.Equal(ko.GPU, want) {
				t.Errorf("kernels-only kernels differ from the full read's")
			}
			if ko.Events != full.Events || !slices.Equal(ko.Categories, full.Categories) {
				t.Errorf("events %d %v, full read %d %v", ko.Events, ko.Categories, full.Events, full.Categories)
			}
			if ko.DeviceName() != full.DeviceName() {
				t.Errorf("device %q, full read %q", ko.DeviceName(), full.DeviceName())
			}
			for _, w := range ko.Warnings {
				if !slices.Contains(full.Warnings, w) {
					t.Errorf("kernels-only warning the full read lacks: %s", w)
				}
			}
			if len(ko.APICalls)+len(ko.Annotations)+len(ko.Ops) != 0 {
				t.Errorf("kernels-only model holds host events")
			}
		})
	}
}

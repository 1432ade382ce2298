package diff

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
)

// compareFiles compares two traces read from fixtures/ on disk (the
// recorded traces are not embedded).
func compareFiles(t *testing.T, base, new string) *Result {
	t.Helper()
	read := func(name string) *trace.Trace {
		tr, err := ingest.ReadFile(filepath.Join("..", "fixtures", name), ingest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	r, err := CompareTraces(read(base), read(new), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestUntestedChangeIsNotSame: fused vs foreach AdamW with 2 compared steps
// a side. The U test cannot reach α=0.05 (smallest p 0.333), so "same"
// would assert what was never tested. testdata/untested_expect.py computes
// the multi_tensor_apply (optimizer) kernels' time per step independently:
// median 815.4 µs → 277.7 µs, −65.9 %.
func TestUntestedChangeIsNotSame(t *testing.T) {
	r := compareFiles(t, "recorded/amp_mlp_foreach.json.gz", "recorded/amp_mlp_fused.json.gz")
	var base, next float64
	for _, k := range r.Kernels {
		if !strings.Contains(k.Name+strings.Join(k.BaseNames, " "), "multi_tensor_apply_kernel") {
			continue
		}
		base += k.BaseTotalUs / float64(r.Base.Samples)
		next += k.NewTotalUs / float64(r.New.Samples)
		if k.Status == Same {
			t.Errorf("%s: %.1f → %.1f µs a step (%+.0f%%) with n=%d+%d marked same", k.Name, k.Base.Median, k.New.Median, k.Pct, r.Base.Samples, r.New.Samples)
		}
	}
	if math.Abs(base-815.4) > 815.4*0.02 || math.Abs(next-277.7) > 277.7*0.02 {
		t.Errorf("optimizer kernels %.1f → %.1f µs a step, want 815.4 → 277.7 (untested_expect.py)", base, next)
	}
	for _, rows := range [][]Row{r.Kernels, r.Categories} {
		for _, k := range rows {
			if k.Status != Added && k.Status != Removed && !k.Testable() {
				want := Untested
				if math.Abs(k.Pct) > UntestedChangePct {
					want = ChangedUntested
				}
				if k.Status != want {
					t.Errorf("%s (%s): %+.1f%% untestable, status %q, want %q", k.Name, k.Category, k.Pct, k.Status, want)
				}
			}
		}
	}
	var elementwise *Row
	for i := range r.Categories {
		if r.Categories[i].Name == "elementwise" {
			elementwise = &r.Categories[i]
		}
	}
	if elementwise == nil || elementwise.Status != ChangedUntested {
		t.Errorf("elementwise category (holds the optimizer kernels): %+v, want %q", elementwise, ChangedUntested)
	}
}

// TestSameKernelsResolveNothing: opts_gpt_plain and opts_gpt_stack_mem run
// the same 339 kernels (untested_expect.py: same name multiset, GPU time
// within 0.4 %); only with_stack/profile_memory differ. A finding present
// only in base is not "resolved" (before fusion-candidate stopped at GEMM
// ops, its backward chain flipped here with the profiler's host overhead),
// and the notes warn about the options.
func TestSameKernelsResolveNothing(t *testing.T) {
	r := compareFiles(t, "recorded/opts_gpt_plain.json.gz", "recorded/opts_gpt_stack_mem.json.gz")
	if len(r.Findings.Resolved) != 0 {
		t.Errorf("resolved between identical kernels: %+v", r.Findings.Resolved)
	}
	found := false
	for _, n := range r.Notes {
		found = found || (strings.Contains(n, "different profiler options") && strings.Contains(n, "with_stack"))
	}
	if !found {
		t.Errorf("no profiler-options note in %q", r.Notes)
	}
	// The converse: the same options give no note.
	same := compareFiles(t, "recorded/amp_mlp_foreach.json.gz", "recorded/amp_mlp_fused.json.gz")
	for _, n := range same.Notes {
		if strings.Contains(n, "profiler options") {
			t.Errorf("same options, note %q", n)
		}
	}
}

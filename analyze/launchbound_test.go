package analyze

import (
	"strings"
	"testing"

	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
)

// launchBoundTrace is 3 steps of 1300µs, each launching n 10µs kernels one
// every 35µs from 200µs in (30µs calls): the kernels are separated by 25µs
// launch gaps, with long gaps (≥ 200µs) only before the first kernel and
// after the last.
func launchBoundTrace(n int) *trace.Trace {
	b := tt.New()
	for s := range 3 {
		at := tt.Us(1300 * float64(s))
		b.Step(at, at+tt.Us(1300))
		train(b, "vectorized_elementwise_kernel", at+tt.Us(200), n, 35, 30, 10)
	}
	return b.Build()
}

func TestLaunchBoundBuilt(t *testing.T) {
	f := oneFinding(t, launchBoundTrace(25), LaunchBound)
	// 25 kernels of 10µs in a 1300µs step: busy 250µs (19%); the 24 gaps
	// between them are 25µs each, 600µs of launch-gap idle out of 1050.
	checkNear(t, "GPU busy", measureOf(t, f, "GPU busy"), 250.0/1300)
	checkNear(t, "launches per step", measureOf(t, f, "launches per step"), 25)
	checkNear(t, "launch-gap idle", measureOf(t, f, "launch-gap idle per step"), 24*25)
	if f.Severity != High {
		t.Errorf("severity %s, want high (busy under 25%%)", f.Severity)
	}
	// 19 launches a step: one short of LaunchBoundMinLaunches.
	noFinding(t, launchBoundTrace(LaunchBoundMinLaunches-1), LaunchBound)
}

// TestLaunchBoundOptimizerLaunches: where a per-parameter optimizer loop
// launches most of a step's kernels (optim_loopmlp's AdamW foreach=False:
// 512 of 708 a step, CUDA events 12.9 → 5.8 ms with fused=True), the
// finding says so and its fix starts with fused=True; a forward-only
// trace keeps its evidence as it was.
func TestLaunchBoundOptimizerLaunches(t *testing.T) {
	r := run(t, "recorded/pairs/optim_loopmlp_base.json.gz")
	f := findingOf(r, LaunchBound.Name)
	if f == nil {
		t.Fatal("no launch-bound")
	}
	if !strings.HasPrefix(f.Fix, "most launches (512 of 708 kernels per step) are the optimizer step's") {
		t.Errorf("fix %q", f.Fix)
	}
	found := false
	for _, e := range f.Evidence {
		found = found || strings.Contains(e.Text, "optimizer 512 (72% in the optimizer step)")
	}
	if !found {
		t.Errorf("no phase line in %+v", f.Evidence)
	}
	for _, e := range oneFinding(t, launchBoundTrace(30), LaunchBound).Evidence {
		if strings.Contains(e.Text, "by phase") {
			t.Errorf("a forward-only step lists phases: %s", e.Text)
		}
	}
}

// TestLaunchBoundNotAllocatorGaps: a step whose host spends longer in
// cudaMalloc/cudaFree than in launches (alloc_conv's empty_cache() loop:
// 814 µs a step against 183 µs of launches; the allocator fix gave the
// untraced step 1.13 ms) is allocator churn, not launch-bound, and
// allocator-churn leads.
func TestLaunchBoundNotAllocatorGaps(t *testing.T) {
	r := run(t, "recorded/pairs/alloc_conv_base.json.gz")
	if f := findingOf(r, LaunchBound.Name); f != nil {
		t.Errorf("launch-bound on allocator gaps: %s", f.Title)
	}
	if len(r.Findings) == 0 || r.Findings[0].ID != AllocatorChurn.Name {
		t.Errorf("first finding %v, want allocator-churn", ids(r))
	}
}

package diff

import (
	"testing"

	"github.com/tracelens/tracelens/analyze"
)

// TestUntracedStepHoldsSyncs: a step with blocking syncs is estimated, for
// the untraced program, at no less than its GPU work plus host-sync's
// untraced saving (the GPU idle its syncs force); sync_accum's fix then
// reads as the gain CUDA events measured (−12.4 %), not as a loss.
func TestUntracedStepHoldsSyncs(t *testing.T) {
	base := analyzePairSide(t, "sync_accum", "base")
	var hs *analyze.Finding
	for i := range base.Findings {
		if base.Findings[i].ID == "host-sync" {
			hs = &base.Findings[i]
		}
	}
	if hs == nil || hs.UntracedSavingUs <= 0 || base.ProfilerCost == nil {
		t.Fatalf("sync_accum base: host-sync %v, profiler cost %v", hs, base.ProfilerCost)
	}
	for i := 1; i < len(base.Steps); i++ {
		s := &base.Steps[i]
		floor := min(s.GPUBusyUs+hs.UntracedSavingUs, s.PeriodUs)
		if got := base.ProfilerCost.UntracedPerStepUs[i]; got < floor-1e-6 {
			t.Errorf("step %d: untraced %.0f µs under GPU busy %.0f + syncs %.0f", i, got, s.GPUBusyUs, hs.UntracedSavingUs)
		}
	}
	r := comparePair(t, "sync_accum")
	d := r.Metric(UntracedStep)
	if d == nil || !(d.Delta.Pct < 0) {
		t.Errorf("untraced step estimate change %v, want a gain as CUDA events measured", d)
	}
}

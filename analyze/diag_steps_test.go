package analyze

import (
	"strings"
	"testing"
)

// findingOf returns the finding with id, or nil.
func findingOf(r *Result, id string) *Finding {
	for i := range r.Findings {
		if r.Findings[i].ID == id {
			return &r.Findings[i]
		}
	}
	return nil
}

// TestStepsFromRepeatedRanges: without ProfilerStep, the repeated
// top-level record_function ranges are the steps, so the first call
// (compilation here) is told apart from the steady state.
func TestStepsFromRepeatedRanges(t *testing.T) {
	for _, name := range []string{"nanobragg_compile.json.gz", "recorded/sincos_compile_cold.json.gz"} {
		t.Run(name, func(t *testing.T) {
			r := run(t, name)
			// The loop iterations iterations.py finds: each from one
			// call's start to the next one's.
			d := iterations(t, name)
			if r.Summary.StepSource != StepSourceRange || r.Summary.StepLabel != d.Label || len(r.Steps) != d.Count {
				t.Fatalf("steps from %s %q ×%d, want record_function %q ×%d", r.Summary.StepSource, r.Summary.StepLabel, len(r.Steps), d.Label, d.Count)
			}
			if ss := r.StepStats; !near(ss.FirstStepUs, d.FirstWallUs) || !near(ss.MedianWallUsNoFirst, d.MedianRest) {
				t.Errorf("first %.1f µs, steady median %.1f µs; want %.1f, %.1f", ss.FirstStepUs, ss.MedianWallUsNoFirst, d.FirstWallUs, d.MedianRest)
			}
			if r.Summary.StepsSynthetic {
				t.Error("derived steps marked synthetic")
			}
		})
	}
	if r := run(t, "recorded/sincos_eager.json.gz"); r.Summary.StepSource != StepSourceProfiler {
		t.Errorf("a ProfilerStep trace: steps from %s", r.Summary.StepSource)
	}
}

// TestIdleGapCauses: gpu-idle names what the host did in the gaps and
// gives that cause's fix; DataLoader workers only for data loading.
func TestIdleGapCauses(t *testing.T) {
	for _, tc := range []struct {
		trace, cause, fixHas, first string
	}{
		{"recorded/train_sync_pageable.json.gz", CauseDataLoading, "num_workers", "gpu-idle"},
		{"recorded/train_pinned_async.json.gz", CauseDataLoading, "num_workers", "gpu-idle"},
		{"recorded/sincos_compile_cold.json.gz", CauseCompiled, "reduce-overhead", "compile-overhead"},
		{"nanobragg_compile.json.gz", CauseCompiled, "reduce-overhead", "compile-overhead"},
		{"recorded/dataloader_mlp.json.gz", CauseDataLoading, "num_workers", "gpu-idle"},
		{"recorded/dataloader_cnn.json.gz", CauseDataLoading, "num_workers", "gpu-idle"},
		{"recorded/sleep_cnn.json.gz", CauseBuiltin, "time.sleep", "gpu-idle"},
		{"recorded/sleep_mlp.json.gz", CauseBuiltin, "time.sleep", "gpu-idle"},
		{"recorded/optim_many_params.json.gz", CauseOptimizer, "fused=True", "gpu-idle"},
	} {
		t.Run(tc.trace, func(t *testing.T) {
			r := run(t, tc.trace)
			e := expected(t, tc.trace)
			if len(r.Findings) == 0 || r.Findings[0].ID != tc.first {
				t.Fatalf("first finding %v, want %s", ids(r), tc.first)
			}
			f := findingOf(r, "gpu-idle")
			if f == nil {
				t.Fatal("no gpu-idle")
			}
			if !strings.Contains(f.Title, "the host was in "+tc.cause) || !strings.Contains(f.Fix, tc.fixHas) {
				t.Errorf("title %q fix %q: want cause %q and %q", f.Title, f.Fix, tc.cause, tc.fixHas)
			}
			if tc.cause != CauseDataLoading && strings.Contains(f.Fix, "DataLoader") {
				t.Errorf("%s gap, fix suggests DataLoader: %s", tc.cause, f.Fix)
			}
			if !near(f.SavingUs, e.MedianLongGapIdleUs) {
				t.Errorf("idle per step %.1f µs, want %.1f", f.SavingUs, e.MedianLongGapIdleUs)
			}
		})
	}
}

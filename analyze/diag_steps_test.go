package analyze

import (
	"math"
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
		// causeRange is the host range (in expected.json's host_ranges)
		// whose GPU idle time the saving credits, "" when the script
		// has none for the cause.
		causeRange string
	}{
		{"recorded/train_sync_pageable.json.gz", CauseDataLoading, "num_workers", "gpu-idle", ""},
		{"recorded/train_pinned_async.json.gz", CauseDataLoading, "num_workers", "gpu-idle", ""},
		{"recorded/sincos_compile_cold.json.gz", CauseCompiled, "reduce-overhead", "compile-overhead", ""},
		{"nanobragg_compile.json.gz", CauseCompiled, "reduce-overhead", "compile-overhead", ""},
		{"recorded/dataloader_mlp.json.gz", CauseDataLoading, "num_workers", "gpu-idle", loaderRange},
		{"recorded/dataloader_cnn.json.gz", CauseDataLoading, "num_workers", "gpu-idle", loaderRange},
		{"recorded/sleep_cnn.json.gz", CauseBuiltin, "time.sleep", "gpu-idle", "<built-in function sleep>"},
		{"recorded/sleep_mlp.json.gz", CauseBuiltin, "time.sleep", "gpu-idle", "<built-in function sleep>"},
		// optimizer-step's exact figure for the same time leads.
		{"recorded/optim_many_params.json.gz", CauseOptimizer, "fused=True", "optimizer-step", "Optimizer.step#AdamW.step"},
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
			if idle := measure(t, *f, "long-gap idle per step").Num / 1e3; !near(idle, e.MedianLongGapIdleUs) {
				t.Errorf("idle per step %.1f µs, want %.1f", idle, e.MedianLongGapIdleUs)
			}
			// The fix removes its cause's idle time, not the rest.
			if f.SavingUs > e.MedianLongGapIdleUs*1.001 {
				t.Errorf("saving %.1f µs per step, more than the %.1f µs of long-gap idle", f.SavingUs, e.MedianLongGapIdleUs)
			}
			if tc.causeRange != "" {
				want := causeIdle(t, tc.trace, tc.causeRange)
				if math.Abs(f.SavingUs-want) > 0.05*want {
					t.Errorf("saving %.1f µs per step, want the %.1f µs of GPU idle inside %s (±5%%)", f.SavingUs, want, tc.causeRange)
				}
			}
		})
	}
}

// loaderRange is the DataLoader's own range around fetching a batch.
const loaderRange = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"

// causeIdle is the median over the steps after the first of the GPU idle
// time inside host range name, from the independent script.
func causeIdle(t *testing.T, trace, name string) float64 {
	t.Helper()
	var v []float64
	for _, s := range recorded(t, trace).Steps[1:] {
		v = append(v, s.HostRanges[name].GPUIdleUs)
	}
	return Median(v)
}

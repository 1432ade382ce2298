package analyze

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// issue26Expected is expect/issue26.json (issue26.py, from the JSON alone).
type issue26Expected struct {
	Alloc struct {
		Calls      float64 `json:"calls_per_step"`
		Us         float64 `json:"us_per_step"`
		EmptyCache float64 `json:"empty_cache_per_step"`
	} `json:"alloc"`
	Layout struct {
		LayoutUs float64 `json:"layout_us_per_step"`
		ConvUs   float64 `json:"conv_us_per_step"`
		KernelUs float64 `json:"kernel_us_per_step"`
	} `json:"layout"`
	SDPAMath struct {
		Us float64 `json:"us_per_step"`
	} `json:"sdpa_math"`
	Phases map[string]struct {
		Calls    float64 `json:"calls"`
		HostUs   float64 `json:"host_us"`
		BusyUs   float64 `json:"busy_us"`
		Launches float64 `json:"launches"`
	} `json:"phases"`
	Memory struct {
		Growth     []float64 `json:"growth"`
		NeverFreed float64   `json:"never_freed_steady_bytes"`
	} `json:"memory"`
}

// TestIssue26Classes: on the recorded traces of each class, its analyzer
// fires with the independent script's figures, and not on the others'.
func TestIssue26Classes(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "fixtures", "recorded", "expect", "issue26.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp map[string]issue26Expected
	if err := json.Unmarshal(b, &exp); err != nil {
		t.Fatal(err)
	}
	us := func(f *Finding, name string) float64 { return measure(t, *f, name).Num / 1e3 }
	near := func(name, what string, got, want float64) {
		if math.Abs(got-want) > 0.01 {
			t.Errorf("%s: %s %.3f, script %.3f", name, what, got, want)
		}
	}
	for name, e := range exp {
		r := run(t, name)
		if f := findingOf(r, "allocator-churn"); (f != nil) != (e.Alloc.Calls >= AllocatorChurnMinCalls) {
			t.Errorf("%s: allocator-churn %v with %.0f allocations per step", name, f != nil, e.Alloc.Calls)
		} else if f != nil {
			near(name, "allocations per step", measure(t, *f, "allocations and frees per step").Num, e.Alloc.Calls)
			near(name, "allocation host time", us(f, "host time in them per step"), e.Alloc.Us)
			near(name, "empty_cache per step", measure(t, *f, "empty_cache calls per step").Num, e.Alloc.EmptyCache)
		}
		if f := findingOf(r, "layout-conversion"); (f != nil) != (e.Layout.ConvUs > 0 && e.Layout.LayoutUs >= LayoutMinShare*e.Layout.KernelUs) {
			t.Errorf("%s: layout-conversion %v with %.1f of %.1f µs of kernel time converting", name, f != nil, e.Layout.LayoutUs, e.Layout.KernelUs)
		} else if f != nil {
			near(name, "layout conversion time", us(f, "layout conversion GPU time per step"), e.Layout.LayoutUs)
			near(name, "convolution time", us(f, "convolution GPU time per step"), e.Layout.ConvUs)
		}
		if f := findingOf(r, "inference-phases"); (f != nil) != (e.Phases["decode"].Calls > 0) {
			t.Errorf("%s: inference-phases %v with %v", name, f != nil, e.Phases)
		} else if f != nil {
			d, steps := e.Phases["decode"], float64(len(r.Steps)-1)
			near(name, "decode calls per step", measure(t, *f, "decode calls per step").Num, d.Calls/steps)
			near(name, "decode host per call", us(f, "decode host time per call"), d.HostUs/d.Calls)
			near(name, "decode GPU busy per call", us(f, "decode GPU busy per call"), d.BusyUs/d.Calls)
			near(name, "decode launches per call", measure(t, *f, "decode launches per call").Num, d.Launches/d.Calls)
		}
		leak := len(e.Memory.Growth) > 0 && slices.Min(e.Memory.Growth) >= MemoryGrowthMinBytes
		if f := findingOf(r, "memory-growth"); (f != nil) != leak {
			t.Errorf("%s: memory-growth %v with growth %v per step", name, f != nil, e.Memory.Growth)
		} else if f != nil {
			near(name, "growth per step", measure(t, *f, "growth per step").Num, Median(slices.Clone(e.Memory.Growth)))
			near(name, "never freed", measure(t, *f, "never freed in the steady steps").Num, e.Memory.NeverFreed)
		}
		if f := findingOf(r, "attention-backend"); (f != nil) != (e.SDPAMath.Us > 0) {
			t.Errorf("%s: attention-backend %v with %.1f µs of math backend per step", name, f != nil, e.SDPAMath.Us)
		} else if f != nil {
			near(name, "math backend time", us(f, "math backend GPU time per step"), e.SDPAMath.Us)
			if findingOf(r, "unfused-attention") != nil {
				t.Errorf("%s: unfused-attention fires on SDPA's own math backend", name)
			}
		}
	}
}

// TestHealthyStepNoFalseAlarm: on a healthy GPU-bound step (compiled
// bf16 GEMMs, fused optimizer, no syncs) no finding claims more than 5 %
// of the step and the step reads GPU-bound.
func TestHealthyStepNoFalseAlarm(t *testing.T) {
	r := run(t, "recorded/issue26/healthy_big.json.gz")
	if r.StepStats.SteadyGPUBusyShare < 0.9 {
		t.Errorf("GPU busy %.1f%% of the step: the recording is not GPU-bound", r.StepStats.SteadyGPUBusyShare*100)
	}
	for _, f := range r.Findings {
		if f.Share > 0.05 {
			t.Errorf("%s claims %.1f%% of a healthy step: %s", f.ID, f.Share*100, f.Title)
		}
	}
}

// TestIssue26Predictions: the GPU time layout-conversion and
// attention-backend predict their fix removes is within 0.67–1.5× of what
// the fix delivered per step in the untraced program (CUDA events,
// issue26/timings.json). (allocator-churn's host-time prediction is not:
// on allocchurn_mlp the untraced step did not get faster; see the
// fixtures README.)
func TestIssue26Predictions(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "fixtures", "recorded", "issue26", "timings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tm map[string]map[string]float64
	if err := json.Unmarshal(b, &tm); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ trace, id, before, after string }{
		{"layout_convnet", "layout-conversion", "converting_step", "channels_last_step"},
		{"layout_wide", "layout-conversion", "converting_step", "channels_last_step"},
		{"sdpamath_gpt", "attention-backend", "math_step", "fixed_step"},
		{"sdpamath_encoder", "attention-backend", "math_step", "fixed_step"},
	} {
		f := findingOf(run(t, "recorded/issue26/"+c.trace+".json.gz"), c.id)
		if f == nil {
			t.Fatalf("%s: no %s", c.trace, c.id)
		}
		delivered := tm[c.trace][c.before] - tm[c.trace][c.after]
		if ratio := f.GPUSavingUs / delivered; ratio < 0.67 || ratio > 1.5 {
			t.Errorf("%s: %s predicts %.1f µs of GPU time per step, the fix delivered %.1f untraced (%.2f×)", c.trace, c.id, f.GPUSavingUs, delivered, ratio)
		}
	}
}

package analyze

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// measureUs returns the named duration measure of f in microseconds.
func measureUs(t *testing.T, f Finding, name string) float64 {
	t.Helper()
	for _, m := range f.Measures {
		if m.Name == name {
			if m.Value.Kind != KindDuration {
				t.Fatalf("%s: measure %q is %v, not a duration", f.Title, name, m.Value.Kind)
			}
			return m.Value.Num / 1e3
		}
	}
	t.Fatalf("%s: no measure %q", f.Title, name)
	return 0
}

// measureCount returns the named count measure of f.
func measureCount(t *testing.T, f Finding, name string) float64 {
	t.Helper()
	for _, m := range f.Measures {
		if m.Name == name {
			return m.Value.Num
		}
	}
	t.Fatalf("%s: no measure %q", f.Title, name)
	return 0
}

// TestFusionSavingSplitMatchesPython: a fusion chain's saving is the GPU
// time it saves on the critical path plus the launch gaps it removes,
// each equal (per step, within rounding) to
// fixtures/recorded/expect/fusion_split.py's independent computation on
// four eager elementwise chains: eggroll's low-rank noise chain
// (launch-bound: 10.5 µs of GPU time saved, none of it on the critical
// path, and 108 µs of launch gaps per step in eggroll_hooks), sincos_eager's
// chain (GPU-bound for 78 % of its time: 801 µs of GPU time, 625 µs of it
// critical, and 36 µs of gaps), opts_sincos_plain's 48-kernel loop, and
// layout_conv's conv2d → relu → contiguous → mean, whose one aten::mean
// call launches a memset and a reduction: 5 kernels from 4 op calls, with
// no intermediate or launch saved inside the call.
func TestFusionSavingSplitMatchesPython(t *testing.T) {
	b, err := os.ReadFile("../fixtures/recorded/expect/fusion_split.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]struct {
		Chain       []string `json:"chain"`
		Occurrences float64  `json:"occurrences"`
		KernelUs    float64  `json:"kernel_us_per_step"`
		GPUSavedUs  float64  `json:"gpu_saved_us_per_step"`
		GapsUs      float64  `json:"gaps_removed_us_per_step"`
		IdleUs      float64  `json:"idle_us_per_step"`
		SpanUs      float64  `json:"span_us_per_step"`
		CritShare   float64  `json:"critical_share"`
		CritUs      float64  `json:"gpu_saved_critical_us_per_step"`
		SavingUs    float64  `json:"saving_us_per_step"`
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) < 2 {
		t.Fatalf("fusion_split.json covers %d traces", len(want))
	}
	for name, w := range want {
		var f *Finding
		r := run(t, name)
		for i := range r.Findings {
			g := &r.Findings[i]
			if g.ID == FusionCandidate.Name && measureCount(t, *g, "kernels in the chain") == float64(len(w.Chain)) &&
				measureCount(t, *g, "occurrences") == w.Occurrences {
				f = g
			}
		}
		if f == nil {
			t.Errorf("%s: no fusion finding of %d kernels × %v (%v)", name, len(w.Chain), w.Occurrences, w.Chain)
			continue
		}
		// Python works in decimal µs, tracelens in whole ns: each
		// occurrence may differ by a few ns of rounding.
		near := func(what string, got, want float64) {
			if math.Abs(got-want) > 0.01 {
				t.Errorf("%s: %s %.3f µs per step, Python %.3f", name, what, got, want)
			}
		}
		gpu, gaps := measureUs(t, *f, "GPU time saved per step"), measureUs(t, *f, "launch gaps removed per step")
		near("kernel time", measureUs(t, *f, "GPU time per step"), w.KernelUs)
		near("GPU time saved", gpu, w.GPUSavedUs)
		near("launch gaps removed", gaps, w.GapsUs)
		near("idle between the kernels", measureUs(t, *f, "GPU idle between the chain's kernels per step"), w.IdleUs)
		near("span", measureUs(t, *f, "chain span per step"), w.SpanUs)
		near("GPU time saved on the critical path", measureUs(t, *f, "GPU time saved on the critical path per step"), w.CritUs)
		near("saving", f.SavingUs, w.SavingUs)
		if got := measureCount(t, *f, "share of these kernels' time the GPU is the bottleneck"); math.Abs(got-w.CritShare) > 1e-5 {
			t.Errorf("%s: critical share %v, Python %v", name, got, w.CritShare)
		}
	}
}

// TestFusionSavingParts: on every fixture, each fusion finding's saving is
// its two parts, the critical part of the GPU time saved (itself within
// the chain's kernel time) and the launch gaps removed within the GPU
// idle time between its kernels, so the whole stays within the chain's
// span.
func TestFusionSavingParts(t *testing.T) {
	seen := 0
	for _, name := range fixtureNames(t) {
		for _, f := range run(t, name).Findings {
			if f.ID != FusionCandidate.Name {
				continue
			}
			seen++
			gpu, gaps := measureUs(t, f, "GPU time saved per step"), measureUs(t, f, "launch gaps removed per step")
			crit := measureUs(t, f, "GPU time saved on the critical path per step")
			kernel, idle := measureUs(t, f, "GPU time per step"), measureUs(t, f, "GPU idle between the chain's kernels per step")
			span := measureUs(t, f, "chain span per step")
			const ns = 1e-3 * 2
			if !(crit >= 0 && crit <= gpu+ns && gpu <= kernel+ns && gaps >= 0 && gaps <= idle+ns && f.SavingUs <= span+ns && math.Abs(f.SavingUs-crit-gaps) <= ns) {
				t.Errorf("%s: %s saves %v = critical %v of GPU %v (of %v kernel time) + gaps %v (of %v idle), span %v",
					name, f.Title, f.SavingUs, crit, gpu, kernel, gaps, idle, span)
			}
		}
	}
	if seen < 10 {
		t.Errorf("only %d fusion findings over the fixtures", seen)
	}
}

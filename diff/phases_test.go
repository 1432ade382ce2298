package diff

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/tracelens/tracelens/analyze"
)

// TestPhaseMetrics: foreach vs fused AdamW on the same AMP GPT. The
// per-phase medians diff compares equal expect.py's independent
// forward / backward / optimizer kernel time of the steps after the
// first (fixtures/recorded/expect/expected.json); two inference runs get
// no phase rows.
func TestPhaseMetrics(t *testing.T) {
	b, err := os.ReadFile("../fixtures/recorded/expect/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var exp map[string]struct {
		Steps []struct {
			Phase map[string]float64 `json:"phase_kernel_us"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(b, &exp); err != nil {
		t.Fatal(err)
	}
	median := func(name, phase string) float64 {
		var v []float64
		for _, s := range exp["recorded/"+name].Steps[1:] {
			v = append(v, s.Phase[phase])
		}
		return analyze.Median(v)
	}
	const base, next = "amp_gpt_foreach.json.gz", "amp_gpt_fused.json.gz"
	r := compareFiles(t, "recorded/"+base, "recorded/"+next)
	for key, phase := range map[string]string{ForwardKernel: "forward", BackwardKernel: "backward", OptimizerKernel: "optimizer"} {
		m := r.Metric(key)
		if m == nil {
			t.Fatalf("no %s metric", key)
		}
		if want := median(base, phase); math.Abs(m.Base.Median-want) > 0.5 {
			t.Errorf("%s base median %.3f µs, expected %.3f", key, m.Base.Median, want)
		}
		if want := median(next, phase); math.Abs(m.New.Median-want) > 0.5 {
			t.Errorf("%s new median %.3f µs, expected %.3f", key, m.New.Median, want)
		}
	}
	r = compareFiles(t, "eggroll_direct.json.gz", "eggroll_hooks.json.gz")
	if r.Metric(ForwardKernel) != nil {
		t.Error("two inference runs have phase rows")
	}
}

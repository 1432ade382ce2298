package analyze

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// coldOpsExpected is expect/coldstart_ops.json (coldstart_ops.py: op
// self times per step and the per-shape test, from the JSON alone).
type coldOpsExpected struct {
	Top []struct {
		Name     string  `json:"name"`
		FirstUs  float64 `json:"first_us"`
		RestUs   float64 `json:"rest_us"`
		ExtraUs  float64 `json:"extra_us"`
		PerShape bool    `json:"per_shape"`
		Shapes   int     `json:"shapes"`
	} `json:"top"`
}

// TestColdStartOpsAgainstScript: the ops behind a first step's excess and
// whether each pays again per new input shape, as the independent script
// finds them, on a per-shape cold start (cuDNN's SDPA plan per sequence
// length) and a torch.compile one (recompiles: compile-overhead's).
func TestColdStartOpsAgainstScript(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "fixtures", "recorded", "expect", "coldstart_ops.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp map[string]coldOpsExpected
	if err := json.Unmarshal(b, &exp); err != nil {
		t.Fatal(err)
	}
	for name, e := range exp {
		t.Run(name, func(t *testing.T) {
			tr, _, _ := WithSteps(load(t, name))
			got := firstStepOps(tr)
			if len(got) != len(e.Top) {
				t.Fatalf("%d ops, script %d", len(got), len(e.Top))
			}
			for i, w := range e.Top {
				g := got[i]
				if g.name != w.Name || math.Abs(g.first-w.FirstUs) > 0.01 || math.Abs(g.rest-w.RestUs) > 0.01 || g.perShape != w.PerShape || g.shapes != w.Shapes {
					t.Errorf("op %d: %s first %.3f rest %.3f per-shape %v (%d shapes); script %s %.3f %.3f %v (%d)",
						i, g.name, g.first, g.rest, g.perShape, g.shapes, w.Name, w.FirstUs, w.RestUs, w.PerShape, w.Shapes)
				}
			}
		})
	}
	// On the SDPA trace the finding says so and gives the fix for the
	// op, not warm-up alone or CUDA_MODULE_LOADING.
	r := run(t, "recorded/issue22/coldstart_sdpa_shapes.json.gz")
	f := findingOf(r, "cold-start")
	if f == nil {
		t.Fatalf("no cold-start: %v", ids(r))
	}
	if !strings.Contains(f.Title, "aten::_cudnn_attention_forward pays per new shape") || !strings.Contains(f.Fix, "sdpa_kernel") ||
		strings.Contains(f.Fix, "CUDA_MODULE_LOADING") {
		t.Errorf("title %q fix %q: want the per-shape op and the SDPA fix", f.Title, f.Fix)
	}
	// The steps that meet a new shape idle in the same op: gpu-idle names
	// the per-shape set-up, not per-step host work.
	if g := findingOf(r, "gpu-idle"); g == nil || !strings.Contains(g.Title, CauseNewShape) || !strings.Contains(g.Fix, "sdpa_kernel") {
		t.Errorf("gpu-idle %+v: want cause %q with the SDPA fix", g, CauseNewShape)
	}
}

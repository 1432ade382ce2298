package analyze

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecompileEveryStep: on the recorded recompile traces
// (torch.compile(dynamic=False), a new shape every step) compile-overhead
// says the function recompiles every step, on a shape change, with the
// script's compiles and Dynamo compile time per step (issue26.py
// recompiles) and the dynamic-shape fix; the compiler's own copies and
// syncs raise no copy, sync or launch finding.
func TestRecompileEveryStep(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "fixtures", "recorded", "expect", "issue26_recompile.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp map[string]struct {
		Compiles float64 `json:"compiles_per_step"`
		Us       float64 `json:"compile_us_per_step"`
	}
	if err := json.Unmarshal(b, &exp); err != nil {
		t.Fatal(err)
	}
	if len(exp) < 2 {
		t.Fatalf("%d recompile traces in the script's output", len(exp))
	}
	for name, e := range exp {
		r := run(t, name)
		f := findingOf(r, "compile-overhead")
		if f == nil {
			t.Fatalf("%s: no compile-overhead finding", name)
		}
		if !strings.Contains(f.Title, "recompiles every step on a new input shape") {
			t.Errorf("%s: title %q", name, f.Title)
		}
		if got := measure(t, *f, "compiles per step").Num; got != e.Compiles {
			t.Errorf("%s: %v compiles per step, script %v", name, got, e.Compiles)
		}
		if got := measure(t, *f, "Dynamo compile time per step").Num / 1e3; math.Abs(got-e.Us) > 0.01 {
			t.Errorf("%s: Dynamo compile time per step %.3f µs, script %.3f", name, got, e.Us)
		}
		for _, w := range []string{"dynamic=True", "mark_dynamic", "pad"} {
			if !strings.Contains(f.Fix, w) {
				t.Errorf("%s: fix without %q: %s", name, w, f.Fix)
			}
		}
		if f.SavingUs < 0.8*r.StepStats.SteadyWallUs {
			t.Errorf("%s: saving %.0f µs of a %.0f µs step", name, f.SavingUs, r.StepStats.SteadyWallUs)
		}
		for _, id := range []string{"host-sync", "small-memcpy", "launch-bound", "memcpy"} {
			if findingOf(r, id) != nil {
				t.Errorf("%s: %s fires on the compiler's own work", name, id)
			}
		}
	}
}

package report

import (
	"strings"
	"testing"
)

// TestComparisonWholeTraceStep: jax_eggroll marks no steps, so its "step"
// is the whole trace: 47.9 ms, 40.3 ms of it the profiler's own start_trace
// and stop_trace (testdata/whole_trace_step.py). Against eggroll_direct's
// 1.37 ms median step that made "34.91×"; the row must say the two are not
// comparable and print no ratio. Two traces with steps keep their ratio.
func TestComparisonWholeTraceStep(t *testing.T) {
	md := markdown(t, load(t, "eggroll_direct.json.gz"), load(t, "jax_eggroll.perfetto.json.gz"))
	var row string
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "| `jax_eggroll`") {
			row = l
		}
	}
	if !strings.Contains(row, "47.9ms (whole trace)") || !strings.Contains(row, "not comparable") || strings.Contains(row, "34.9") {
		t.Errorf("jax row %q: want the whole-trace step marked and no ratio", row)
	}
	if !strings.Contains(md, "is not comparable with a step") {
		t.Errorf("no note on the whole-trace step")
	}
	md = markdown(t, load(t, "eggroll_direct.json.gz"), load(t, "eggroll_hooks.json.gz"))
	if strings.Contains(md, "not comparable") || !strings.Contains(md, "| 1.00× |") {
		t.Errorf("two traces with steps lost their ratio")
	}
}

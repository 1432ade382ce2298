package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/trace"
)

// wholeTrace returns in's trace with each jitted call renamed apart
// (PjitFunction(fwd)#3): a real JAX trace in which no unit of work
// repeats, so its only "step" is the whole trace.
func wholeTrace(t *testing.T, in Input) Input {
	t.Helper()
	c := *in.Trace
	c.Ops = append([]trace.Op(nil), in.Trace.Ops...)
	for i := range c.Ops {
		if strings.HasPrefix(c.Ops[i].Name, "PjitFunction(") {
			c.Ops[i].Name = fmt.Sprintf("%s#%d", c.Ops[i].Name, i)
		}
	}
	r, err := analyze.Run(&c, analyze.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Summary.StepsSynthetic {
		t.Fatalf("still %d steps from %s", len(r.Steps), r.Summary.StepSource)
	}
	return Input{Trace: &c, Result: r}
}

// TestComparisonWholeTraceStep: a trace whose "step" is the whole trace
// (jax_eggroll with its jit calls told apart: 47.9 ms, 40.3 ms of it the
// profiler's own start_trace and stop_trace, testdata/whole_trace_step.py)
// against eggroll_direct's 1.37 ms median step made "34.91×"; the row must
// say the two are not comparable and print no ratio. Two traces with steps
// keep their ratio, jax_eggroll's own jit calls as steps included.
func TestComparisonWholeTraceStep(t *testing.T) {
	md := markdown(t, load(t, "eggroll_direct.json.gz"), wholeTrace(t, load(t, "jax_eggroll.perfetto.json.gz")))
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
	md = markdown(t, load(t, "eggroll_direct.json.gz"), load(t, "jax_eggroll.perfetto.json.gz"))
	if strings.Contains(md, "not comparable") || !strings.Contains(md, "| 0.24× |") {
		t.Errorf("jax_eggroll's jit iterations as steps (329µs, call start to call start, against 1.37ms): want a ratio of 0.24×")
	}
}

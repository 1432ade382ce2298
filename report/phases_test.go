package report

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/ingest"
)

// expectedPhases reads the forward/backward/optimizer kernel time per step
// that fixtures/recorded/expect/expect.py computed from the trace JSON
// (kernels attributed by their launch's enclosing autograd / optimizer
// range), independently of tracelens.
func expectedPhases(t *testing.T, name string) []map[string]float64 {
	t.Helper()
	b, err := os.ReadFile("../fixtures/recorded/expect/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]struct {
		Steps []struct {
			Phase map[string]float64 `json:"phase_kernel_us"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	var out []map[string]float64
	for _, s := range all[name].Steps {
		out = append(out, s.Phase)
	}
	if len(out) < 2 {
		t.Fatalf("%s: expected.json has %d steps with phases", name, len(out))
	}
	return out
}

// TestPhaseSplitRendered: on a real AMP GPT training trace the rendered
// phase table and line carry the Result's figures, and those equal the
// independent per-step figures and their medians after the first step.
func TestPhaseSplitRendered(t *testing.T) {
	const name = "recorded/amp_gpt_foreach.json.gz"
	tr, err := ingest.ReadFile("../fixtures/"+name, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Trace: tr}
	if in.Result, err = analyze.Run(tr, analyze.Config{}); err != nil {
		t.Fatal(err)
	}
	r := in.Result
	exp := expectedPhases(t, name)
	if len(r.Steps) != len(exp) {
		t.Fatalf("%d steps, expected %d", len(r.Steps), len(exp))
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 0.5 {
			t.Errorf("%s: %.3f µs, expected %.3f", what, got, want)
		}
	}
	var md bytes.Buffer
	if err := Markdown(&md, []Input{in}, Options{}); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	var fwd, bwd, opt []float64
	for i, s := range r.Steps {
		near("forward", s.ForwardUs, exp[i]["forward"])
		near("backward", s.BackwardUs, exp[i]["backward"])
		near("optimizer", s.OptimizerUs, exp[i]["optimizer"])
		row := strings.Join([]string{us(s.ForwardUs), us(s.BackwardUs), us(s.OptimizerUs), us(s.KernelUs)}, " | ")
		if !strings.Contains(out, row) {
			t.Errorf("step #%d: no phase row %q in the report", s.Number, row)
		}
		if i > 0 {
			fwd = append(fwd, exp[i]["forward"])
			bwd = append(bwd, exp[i]["backward"])
			opt = append(opt, exp[i]["optimizer"])
		}
	}
	st := r.StepStats
	near("median forward", st.MedianForwardUs, analyze.Median(fwd))
	near("median backward", st.MedianBackwardUs, analyze.Median(bwd))
	near("median optimizer", st.MedianOptimizerUs, analyze.Median(opt))
	if line := phaseLine(st, "median excl. first"); !strings.Contains(out, line) {
		t.Errorf("no phase line %q in the report", line)
	}
}

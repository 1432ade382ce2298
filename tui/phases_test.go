package tui

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
)

// TestOverviewPhaseBar: on a real AMP GPT training trace the overview's
// phase bar quotes the Result's forward / backward / optimizer medians.
// (report's TestPhaseSplitRendered checks those against expect.py's.)
func TestOverviewPhaseBar(t *testing.T) {
	const path = "../fixtures/recorded/amp_gpt_foreach.json.gz"
	opts := Options{Name: path, Renderer: plainRenderer(), Load: func(progress func(read, total int64)) (*trace.Trace, error) {
		return ingest.ReadFile(path, ingest.Options{Progress: progress})
	}}
	m := loaded(t, opts, 140, 40)
	ss := m.screens[scrKernels].(*kernelsScreen).d.res.StepStats
	if !m.screens[scrKernels].(*kernelsScreen).d.res.HasPhaseSplit() {
		t.Fatal("a training trace has no phase split")
	}
	want := "forward " + us(ss.MedianForwardUs).String() + " · backward " + us(ss.MedianBackwardUs).String() + " · optimizer " + us(ss.MedianOptimizerUs).String()
	var line string
	for _, l := range strings.Split(m.View(), "\n") {
		if strings.Contains(l, "Phases") {
			line = l
		}
	}
	if !strings.Contains(line, want) {
		t.Errorf("phase bar %q lacks %q", line, want)
	}
}

// TestKernelsAutotuneMarker: every kernel torch.compile's autotuner
// launched carries the marker on the Kernels screen and no other does;
// their launches add up to diag_expect.py's independent count.
func TestKernelsAutotuneMarker(t *testing.T) {
	const name = "nanobragg_compile.json.gz"
	b, err := os.ReadFile("../fixtures/recorded/expect/diag_expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var exp map[string]struct {
		AutotuneKernels int `json:"autotune_kernels"`
	}
	if err := json.Unmarshal(b, &exp); err != nil {
		t.Fatal(err)
	}
	m := loaded(t, fixtureOptions(name), 140, 40)
	ks := m.screens[scrKernels].(*kernelsScreen)
	launches := 0
	for row, k := range ks.d.kernels {
		marked := strings.HasPrefix(ks.tbl.cell(row, 0), autotuneMark)
		if marked != k.Autotune {
			t.Errorf("%s: marked %v, autotune %v", k.short, marked, k.Autotune)
		}
		if marked {
			launches += k.Count
		}
	}
	if want := exp[name].AutotuneKernels; launches != want || want == 0 {
		t.Errorf("marked kernels launched %d times, diag_expect.py counts %d autotune launches", launches, want)
	}
}

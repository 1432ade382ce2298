package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tracelens/tracelens/analyze"
)

// TestFindingsHeadlinePhaseSplit: the findings headline of a real AMP GPT
// training trace quotes the forward / backward / optimizer kernel time per
// step, equal (as printed) to the medians after the first step of
// expect.py's independent per-step figures; an inference-only trace's
// headline has no split.
func TestFindingsHeadlinePhaseSplit(t *testing.T) {
	b, err := os.ReadFile(fixture("recorded/expect/expected.json"))
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
	steps := exp["recorded/amp_gpt_foreach.json.gz"].Steps
	if len(steps) < 3 {
		t.Fatalf("expected.json has %d steps", len(steps))
	}
	median := func(phase string) string {
		var v []float64
		for _, s := range steps[1:] {
			v = append(v, s.Phase[phase])
		}
		return analyze.FormatUs(analyze.Median(v))
	}
	out, errOut, code := runCLI(t, nil, "findings", fixture("recorded/amp_gpt_foreach.json.gz"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	head, _, _ := strings.Cut(out, "\n")
	want := "forward " + median("forward") + " / backward " + median("backward") + " / optimizer " + median("optimizer")
	if !strings.Contains(head, want) {
		t.Errorf("headline %q lacks %q", head, want)
	}
	out, _, _ = runCLI(t, nil, "findings", fixture("eggroll_direct.json.gz"))
	if head, _, _ := strings.Cut(out, "\n"); strings.Contains(head, "backward") {
		t.Errorf("inference trace's headline has a phase split: %q", head)
	}
}

// TestTopMarksAutotuneRows: the text rows carrying the autotune marker
// are exactly the JSON rows with autotune true, and stay 100 columns.
func TestTopMarksAutotuneRows(t *testing.T) {
	f := fixture("nanobragg_compile.json.gz")
	js, _, code := runCLI(t, nil, "top", "--format", "json", "-n", "0", f)
	if code != 0 {
		t.Fatalf("top json exit %d", code)
	}
	var got struct {
		Kernels []struct {
			Autotune bool `json:"autotune"`
		} `json:"kernels"`
	}
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, k := range got.Kernels {
		if k.Autotune {
			want++
		}
	}
	text, _, _ := runCLI(t, nil, "top", "-n", "0", f)
	marked := 0
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, topAutotuneMark) {
			marked++
			if n := utf8.RuneCountInString(l); n != 100 {
				t.Errorf("%d columns: %q", n, l)
			}
		}
	}
	if marked != want || want == 0 {
		t.Errorf("%d rows marked, JSON has %d autotune rows", marked, want)
	}
}

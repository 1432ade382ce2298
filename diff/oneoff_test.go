package diff

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/ingest"
)

// TestOneOffFindingsCompareTheirCost: a one-time cost (compile-overhead,
// cold-start) saves nothing per step, so diff compares its cost, never
// calls it "worth X per step", on real traces: two torch.compile runs
// (the compilation persists) and a compiled run against an eager one
// (compilation resolved, a cold start new).
func TestOneOffFindingsCompareTheirCost(t *testing.T) {
	load := func(name string) *analyze.Result {
		tr, err := ingest.ReadFile("../fixtures/"+name, ingest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := analyze.Run(tr, analyze.Config{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	oneOff := func(r *analyze.Result, id string) float64 {
		for _, f := range r.Findings {
			if f.ID == id && f.SavingFrom == analyze.FromOneOff {
				return f.OneOffUs
			}
		}
		t.Fatalf("%s: no one-time %s finding", r.Source, id)
		return 0
	}
	for _, c := range []struct {
		base, new string
		want      func(b, n *analyze.Result) []string
	}{
		{"recorded/compile_autotune_gemm.json.gz", "recorded/compile_autotune_mlp.json.gz", func(b, n *analyze.Result) []string {
			return []string{"persisting `compile-overhead`", "(one-time cost " + FormatTime(oneOff(b, "compile-overhead")) + " → " + FormatTime(oneOff(n, "compile-overhead")) + ")"}
		}},
		{"recorded/compile_autotune_gemm.json.gz", "recorded/eager_sincos_calls.json.gz", func(b, n *analyze.Result) []string {
			return []string{"(was a one-time cost of " + FormatTime(oneOff(b, "compile-overhead")) + ")",
				"severity, one-time cost " + FormatTime(oneOff(n, "cold-start")) + ")"}
		}},
	} {
		b, n := load(c.base), load(c.new)
		d, err := Compare(b, n, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var md bytes.Buffer
		if err := WriteMarkdown(&md, d); err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want(b, n) {
			if !strings.Contains(md.String(), w) {
				t.Errorf("%s → %s: the diff lacks %q", c.base, c.new, w)
			}
		}
		for _, line := range strings.Split(md.String(), "\n") {
			if (strings.Contains(line, "compile-overhead") || strings.Contains(line, "cold-start")) && strings.Contains(line, "per step") {
				t.Errorf("%s → %s: a one-time cost quoted per step: %s", c.base, c.new, line)
			}
		}
		var js bytes.Buffer
		if err := WriteJSON(&js, d); err != nil {
			t.Fatal(err)
		}
		var got struct {
			Findings map[string][]struct {
				ID           string
				OneOff       bool    `json:"one_off"`
				BaseSavingUs float64 `json:"base_saving_us"`
				NewSavingUs  float64 `json:"new_saving_us"`
			} `json:"findings"`
		}
		if err := json.Unmarshal(js.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		for kind, fs := range got.Findings {
			for _, f := range fs {
				if (f.ID == "compile-overhead" || f.ID == "cold-start") && (!f.OneOff || f.BaseSavingUs != 0 || f.NewSavingUs != 0) {
					t.Errorf("%s → %s: %s %s in JSON: one_off %v, savings %v → %v", c.base, c.new, kind, f.ID, f.OneOff, f.BaseSavingUs, f.NewSavingUs)
				}
			}
		}
	}
}

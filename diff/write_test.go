package diff

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

func TestFormatTimeAndPct(t *testing.T) {
	for us, want := range map[float64]string{2000: "2.00 ms", 1375.2: "1.38 ms", 135.1: "135 µs", 0.812: "812 ns", 0: "0 ns", 47944.5: "47.9 ms"} {
		if got := FormatTime(us); got != want {
			t.Errorf("FormatTime(%v) = %q, want %q", us, got, want)
		}
	}
	for p, want := range map[float64]string{-30.7: "−31%", 0.34: "+0.3%", -4.25: "−4.2%", 2540: "+2540%", 0: "+0.0%"} {
		if got := FormatPct(p); got != want {
			t.Errorf("FormatPct(%v) = %q, want %q", p, got, want)
		}
	}
}

func TestMarkdownCrossFrameworkLeadsWithCategories(t *testing.T) {
	r := mustCompare(t, "jax_eggroll.perfetto.json.gz", "eggroll_direct.json.gz", Options{})
	var b strings.Builder
	if err := WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	cats, kernels := strings.Index(md, "#### Kernel categories"), strings.Index(md, "#### Kernels")
	if cats < 0 || kernels < 0 || cats > kernels {
		t.Errorf("categories at %d, kernels at %d: want categories first\n%s", cats, kernels, md)
	}
	for _, want := range []string{"n=9+4", "#### Notes", "compare kernel time by category"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if strings.Contains(md, "#### Ops") {
		t.Error("op names of two frameworks compared")
	}
}

func TestWritersEscapeHostileNames(t *testing.T) {
	base := synthetic(t, "a|b.json", map[string]trace.Duration{"evil|kernel\x1b[31m<b>": 10_000})
	next := synthetic(t, "new.json", map[string]trace.Duration{"evil|kernel\x1b[31m<b>": 12_000})
	r, err := Compare(base, next, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var md, text, js strings.Builder
	if err := WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "`evil\\|kernel?[31m") || !strings.Contains(md.String(), "`a\\|b.json`") || strings.ContainsRune(md.String(), 0x1b) {
		t.Errorf("markdown does not escape pipes and control characters:\n%s", md.String())
	}
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsRune(text.String(), 0x1b) {
		t.Errorf("text output passes an escape sequence through:\n%q", text.String())
	}
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(js.String()), &doc); err != nil {
		t.Fatalf("invalid JSON: %v", err)
	}
	k := doc["kernels"].([]any)[0].(map[string]any)
	if k["name"] != "evil|kernel\x1b[31m<b>" || k["status"] != "changed" || k["significant"] != true {
		t.Errorf("kernel JSON %v", k)
	}
}

func TestJSONNullForChangeFromZero(t *testing.T) {
	base := synthetic(t, "base", map[string]trace.Duration{"kept": 10_000})
	next := synthetic(t, "new", map[string]trace.Duration{"kept": 10_000, "fresh": 5_000})
	r, err := Compare(base, next, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Kernels []struct {
			Name     string   `json:"name"`
			Status   string   `json:"status"`
			DeltaPct *float64 `json:"delta_pct"`
		} `json:"kernels"`
	}
	if err := json.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range doc.Kernels {
		if (k.Name == "fresh") != (k.DeltaPct == nil) {
			t.Errorf("%s (%s): delta_pct %v; want null only for the added kernel", k.Name, k.Status, k.DeltaPct)
		}
	}
}

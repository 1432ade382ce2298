package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDiffCLI runs `tracelens diff` as a user or a CI job would: real
// traces, exit codes, stdout and stderr (in process, through runMain).
func TestDiffCLI(t *testing.T) {
	fx := func(name string) string { return filepath.Join("..", "..", "fixtures", name) }
	naive, cublas := fx("fusedlinear_naive.json.gz"), fx("fusedlinear_cublas.json.gz")
	hooks, direct := fx("eggroll_hooks.json.gz"), fx("eggroll_direct.json.gz")
	run := func(t *testing.T, args ...string) (stdout, stderr string, code int) {
		t.Helper()
		return runCLI(t, nil, append([]string{"diff"}, args...)...)
	}

	t.Run("markdown summary line first", func(t *testing.T) {
		out, stderr, code := run(t, "--format", "md", hooks, direct)
		if code != 0 || stderr != "" {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		first := strings.SplitN(out, "\n", 2)[0]
		if !regexp.MustCompile(`^\*\*step period 2\.03 ms → 1\.39 ms \(−31%, p=0\.029\) \[profiler-limited, untraced est\. −58%: see notes\] · GPU busy 135 µs → 135 µs \(~, p=0\.\d+\)\*\*$`).MatchString(first) {
			t.Errorf("first line %q", first)
		}
		for _, want := range []string{"| metric | base | new | vs base |", "| step wall | 1.98 ms ± 5% | 1.37 ms ± 5% | **−31%** (p=0.029 n=4+4) |", "#### Kernels", "`gemmk1_kernel<cublasGemmk1Params, float>`"} {
			if !strings.Contains(out, want) {
				t.Errorf("markdown lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("text", func(t *testing.T) {
		out, _, code := run(t, hooks, direct)
		if code != 0 || !strings.HasPrefix(out, "step period 2.03 ms → 1.39 ms (−31%, p=0.029)") || strings.Contains(out, "|") {
			t.Errorf("exit %d, text output:\n%s", code, out)
		}
	})

	t.Run("json schema", func(t *testing.T) {
		out, _, code := run(t, naive, cublas, "--format", "json")
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
		var doc struct {
			Summary  map[string]map[string]any `json:"summary"`
			Kernels  []map[string]any          `json:"kernels"`
			Findings map[string][]any          `json:"findings"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("invalid JSON: %v\n%s", err, out)
		}
		for _, key := range []string{"step_wall_us", "gpu_busy_us", "gpu_idle_us", "launches", "launch_api_us"} {
			m, ok := doc.Summary[key]
			if !ok {
				t.Errorf("summary lacks %s", key)
				continue
			}
			for _, f := range []string{"base", "new", "delta_pct", "p_value", "significant"} {
				if _, ok := m[f]; !ok {
					t.Errorf("summary.%s lacks %s", key, f)
				}
			}
		}
		busy := doc.Summary["gpu_busy_us"]
		if busy["significant"] != true || busy["delta_pct"].(float64) > -95 {
			t.Errorf("gpu_busy_us = %v, want about −96%% and significant", busy)
		}
		if len(doc.Kernels) != 3 {
			t.Fatalf("%d kernels, want 3", len(doc.Kernels))
		}
		for _, k := range doc.Kernels {
			for _, f := range []string{"name", "status", "base_total_us", "new_total_us", "delta_pct", "p_value", "significant"} {
				if _, ok := k[f]; !ok {
					t.Errorf("kernel lacks %s: %v", f, k)
				}
			}
			switch {
			case strings.Contains(k["name"].(string), "naive") && k["status"] != "removed":
				t.Errorf("naive kernel %v, want removed", k)
			case k["status"] == "added" && k["delta_pct"] != nil:
				t.Errorf("added kernel has a percentage: %v", k)
			}
		}
		for _, f := range []string{"resolved", "new", "persisting"} {
			if _, ok := doc.Findings[f]; !ok {
				t.Errorf("findings lacks %s", f)
			}
		}
	})

	t.Run("gate trips on regression", func(t *testing.T) {
		for _, pct := range []string{"5", "5%"} {
			out, stderr, code := run(t, "--fail-on-regression", pct, cublas, naive)
			if code != 1 {
				t.Errorf("--fail-on-regression %s: exit %d, want 1", pct, code)
			}
			if !strings.Contains(stderr, "regression gate tripped") || !strings.Contains(stderr, "GPU busy") || out == "" {
				t.Errorf("--fail-on-regression %s: stderr %q, stdout %d bytes", pct, stderr, len(out))
			}
		}
	})

	t.Run("gate passes", func(t *testing.T) {
		for _, args := range [][]string{{hooks, hooks}, {naive, cublas}, {hooks, direct}} {
			_, stderr, code := run(t, append([]string{"--fail-on-regression", "5%"}, args...)...)
			if code != 0 || !strings.Contains(stderr, "gate passed") {
				t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
			}
		}
		// Two steady steps (amp_gpt_foreach's 3, the first left out)
		// cannot be tested: the medians decide, and the message says
		// significance could not be tested.
		_, stderr, code := run(t, "--fail-on-regression", "5", direct, fx("recorded/amp_gpt_foreach.json.gz"))
		if code != 1 || !strings.Contains(stderr, "step period regressed more than 5% by the medians; significance could not be tested") {
			t.Errorf("untestable regression: exit %d, stderr %q", code, stderr)
		}
		// A trace against itself: nothing significant in any format.
		out, _, _ := run(t, "--format", "json", hooks, hooks)
		if strings.Contains(out, `"significant": true`) {
			t.Errorf("self comparison has significant rows:\n%s", out)
		}
	})

	t.Run("bad usage exits 2", func(t *testing.T) {
		cases := [][]string{
			{hooks},
			{hooks, direct, naive},
			{"--format", "html", hooks, direct},
			{"--fail-on-regression", "five", hooks, direct},
			{"--fail-on-regression", "-5", hooks, direct},
			{"--alpha", "0", hooks, direct},
			{hooks, filepath.Join(t.TempDir(), "missing.json")},
		}
		for _, args := range cases {
			_, stderr, code := run(t, args...)
			if code != 2 || stderr == "" {
				t.Errorf("%v: exit %d, stderr %q; want 2 with a message", args, code, stderr)
			}
		}
	})
}

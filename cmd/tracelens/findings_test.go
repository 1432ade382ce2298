package main

import (
	"strings"
	"testing"
)

func TestFindingsCLI(t *testing.T) {
	out, errOut, code := runCLI(t, nil, "findings", fixture("eggroll_hooks.json.gz"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"5 steps", "[launch-bound]", "[hook-overhead] Python module hooks take 6.58ms",
		"[fusion-candidate] fuse randn → repeat_interleave → mul", "[tf32-disabled]", "fix: ", "saving model",
		"eggroll_perturb_hook() at capture_traces.py:84"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if i, j := strings.Index(out, "1. [launch-bound]"), strings.Index(out, "2. [hook-overhead]"); i < 0 || j < i {
		t.Errorf("findings not ranked by saving:\n%s", out)
	}
}

func TestFindingsCLISelection(t *testing.T) {
	out, _, code := runCLI(t, nil, "findings", "--enable", "hook-overhead", fixture("eggroll_direct.json.gz"))
	if code != 0 || !strings.Contains(out, "no findings (analyzers run: hook-overhead)") {
		t.Errorf("eggroll_direct must have no hook overhead (exit %d):\n%s", code, out)
	}
	out, _, code = runCLI(t, nil, "findings", fixture("eggroll_hooks.json.gz"), "--disable", "launch-bound,tf32-disabled")
	if code != 0 || strings.Contains(out, "[launch-bound]") || strings.Contains(out, "[tf32-disabled]") || !strings.Contains(out, "[hook-overhead]") {
		t.Errorf("--disable (exit %d):\n%s", code, out)
	}
	_, errOut, code := runCLI(t, nil, "findings", "--enable", "no-such-analyzer", fixture("eggroll_hooks.json.gz"))
	if code != 2 || !strings.Contains(errOut, `unknown analyzer "no-such-analyzer"`) || !strings.Contains(errOut, "fusion-candidate") {
		t.Errorf("unknown analyzer: exit %d, stderr %q", code, errOut)
	}
	if _, _, code := runCLI(t, nil, "findings"); code != 2 {
		t.Errorf("no trace: exit %d, want 2", code)
	}
}

func TestAnalyzersCLI(t *testing.T) {
	out, _, code := runCLI(t, nil, "analyzers")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, id := range []string{"fusion-candidate", "hook-overhead", "launch-bound", "gpu-idle", "compile-overhead", "custom-gemm",
		"host-sync", "pageable-memcpy", "small-memcpy", "tf32-disabled", "fp64-compute", "unfused-attention"} {
		if !strings.Contains(out, "\n"+id+"\n") && !strings.HasPrefix(out, id+"\n") {
			t.Errorf("analyzers does not list %s", id)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if len([]rune(line)) > 82 {
			t.Errorf("line wider than 82 columns: %q", line)
		}
	}
	if _, _, code := runCLI(t, nil, "analyzers", "extra"); code != 2 {
		t.Errorf("analyzers with an argument: exit %d, want 2", code)
	}
}

package analyze

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// untracedTimings reads fixtures/recorded/issue22/timings.json: per
// recorded program, the median of 30 synchronized calls of each variant
// timed with CUDA events, unprofiled (capture_issue22.py).
func untracedTimings(t *testing.T) map[string]map[string]float64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "fixtures", "recorded", "issue22", "timings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]map[string]float64
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPredictionsAgainstUntracedTimings: a saving is a prediction. On the
// programs recorded with untraced CUDA-event timings of the fix beside
// the trace, what a finding predicts agrees with what the fix delivered:
//   - custom-gemm's saving for the naive CuPy GEMM is within 0.67–1.5× of
//     the naive kernel's untraced time less torch.matmul's on the same
//     shapes (437.8 − 81.6 µs);
//   - where the compiled variant is faster untraced, compiled-slower does
//     not call it slower on the GPU, and a host-only difference measured
//     under with_stack is at most low severity and low confidence.
func TestPredictionsAgainstUntracedTimings(t *testing.T) {
	tm := untracedTimings(t)
	r := run(t, "recorded/issue22/rawkernel_cupy_gemm.json.gz")
	f := findingOf(r, "custom-gemm")
	if f == nil {
		t.Fatalf("no custom-gemm: %v", ids(r))
	}
	delivered := tm["rawkernel_cupy_gemm"]["cupy_naive_gemm"] - tm["rawkernel_cupy_gemm"]["torch_matmul"]
	if ratio := f.SavingUs / delivered; ratio < 0.67 || ratio > 1.5 {
		t.Errorf("custom-gemm predicts %.1f µs per step, the fix delivered %.1f untraced (%.2f×)", f.SavingUs, delivered, ratio)
	}
	for _, name := range []string{"ab_compiled_gemm", "ab_compiled_pointwise"} {
		var compiled, eager float64
		for k, v := range tm[name] {
			switch {
			case strings.HasPrefix(k, "compiled"):
				compiled = v
			case strings.HasPrefix(k, "eager"):
				eager = v
			}
		}
		if !(compiled > 0 && compiled < eager) {
			t.Fatalf("%s: untraced compiled %.1f µs, eager %.1f: the test expects compiled faster", name, compiled, eager)
		}
		r := run(t, "recorded/issue22/"+name+".json.gz")
		if f := findingOf(r, "compiled-slower"); f != nil {
			if strings.Contains(f.Title, "slower on the GPU") || f.Severity != Low || f.Confidence != Low {
				t.Errorf("%s: untraced, compiled is faster (%.1f vs %.1f µs), but compiled-slower says %q at %s severity, %s confidence",
					name, compiled, eager, f.Title, f.Severity, f.Confidence)
			}
		}
	}
}

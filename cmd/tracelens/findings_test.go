package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/analyze"
)

func TestFindingsCLI(t *testing.T) {
	out, errOut, code := runCLI(t, nil, "findings", fixture("eggroll_hooks.json.gz"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"5 steps", "[launch-bound]", "[hook-overhead] module hooks take 6.58ms",
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
	out, _, code := runCLI(t, nil, "analyzers", "--long")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, id := range []string{"fusion-candidate", "hook-overhead", "launch-bound", "gpu-idle", "compile-overhead", "custom-gemm",
		"host-sync", "pageable-memcpy", "small-memcpy", "tf32-disabled", "fp64-compute", "unfused-attention"} {
		if !strings.Contains(out, "\n"+id+"\n") && !strings.HasPrefix(out, id+"\n") {
			t.Errorf("analyzers --long does not list %s", id)
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

// TestFindingsJSON checks the machine face of findings: analyze's Result
// with its schema version, savings in µs and ns within the step, the
// combined saving, and evidence tables whose numeric columns hold numbers.
func TestFindingsJSON(t *testing.T) {
	out, errOut, code := runCLI(t, nil, "findings", "--format", "json", fixture("eggroll_hooks.json.gz"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r struct {
		SchemaVersion int `json:"schema_version"`
		Summary       struct {
			CombinedSavingUs float64 `json:"combined_saving_us"`
		} `json:"summary"`
		StepStats struct {
			SteadyWallUs float64 `json:"steady_wall_us"`
		} `json:"step_stats"`
		Findings []struct {
			ID       string  `json:"id"`
			SavingUs float64 `json:"saving_us"`
			SavingNs int64   `json:"saving_ns"`
			Share    float64 `json:"share"`
			Evidence []struct {
				Table *struct {
					Columns []struct{ Name, Kind, Unit string } `json:"columns"`
					Rows    [][]any                             `json:"rows"`
				} `json:"table"`
			} `json:"evidence"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not JSON: %v\n%.300s", err, out)
	}
	step := r.StepStats.SteadyWallUs
	if r.SchemaVersion != analyze.SchemaVersion || len(r.Findings) == 0 || step <= 0 {
		t.Fatalf("schema %d, %d findings, step %v", r.SchemaVersion, len(r.Findings), step)
	}
	var sum float64
	tables := 0
	for _, f := range r.Findings {
		sum += f.SavingUs
		if f.SavingUs > step || f.Share < 0 || f.Share > 1 || math.Abs(float64(f.SavingNs)-f.SavingUs*1e3) > 1 {
			t.Errorf("%s: saving %vµs %dns share %v, step %vµs", f.ID, f.SavingUs, f.SavingNs, f.Share, step)
		}
		for _, e := range f.Evidence {
			if e.Table == nil {
				continue
			}
			tables++
			for _, row := range e.Table.Rows {
				for i, c := range row {
					_, isNum := c.(float64)
					switch kind := e.Table.Columns[i].Kind; kind {
					case "duration", "count", "bytes", "rate", "percent":
						if !isNum && c != nil {
							t.Errorf("%s: %s cell %v in column %q is not a number", f.ID, kind, c, e.Table.Columns[i].Name)
						}
					case "name", "source":
						if _, ok := c.(string); !ok && c != nil {
							t.Errorf("%s: %s cell %v is not a string", f.ID, kind, c)
						}
					default:
						t.Errorf("%s: column %q of unknown kind %q", f.ID, e.Table.Columns[i].Name, kind)
					}
				}
			}
		}
	}
	if tables == 0 {
		t.Error("no evidence table in the JSON")
	}
	if c := r.Summary.CombinedSavingUs; c <= 0 || c > step || c > sum+1e-6 {
		t.Errorf("combined saving %vµs: want within (0, min(step %v, sum %v)]", c, step, sum)
	}
}

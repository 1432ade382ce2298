package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/fixtures/genranks"
)

// genRun writes a 3-rank run made from the real DDP rank traces, rank 1
// delayed 6 ms per step on the host (skipping when this machine has no
// rank traces).
func genRun(t *testing.T, straggler int) string {
	t.Helper()
	srcs, ok, err := genranks.ParseFirst("../../fixtures/runs/ddp/*.json*", "../../fixtures/runs/multirank_ddp/*.json*", "/work/shared/traces/multirank_ddp/*.json*")
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Skip("no DDP rank traces on this machine")
	}
	dir := t.TempDir()
	if _, err := genranks.Generate(dir, srcs, genranks.Options{Ranks: 3, Size: 1, Straggler: straggler, Delay: 6_000_000, Gzip: true}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRunFindingsNameTheStraggler(t *testing.T) {
	dir := genRun(t, 1)
	out, errOut, code := runCLI(t, nil, "findings", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"3 ranks of 3", "[straggler] Rank 1 makes the other ranks wait", "dataloader.next", "on the host"} {
		if !strings.Contains(out, want) {
			t.Errorf("findings output lacks %q:\n%s", want, out)
		}
	}
	// A glob and a list of files name the same run.
	glob, _, code := runCLI(t, nil, "findings", filepath.Join(dir, "rank*.json.gz"))
	files, _ := filepath.Glob(filepath.Join(dir, "*.gz"))
	list, _, code2 := runCLI(t, nil, append([]string{"findings"}, files...)...)
	if code != 0 || code2 != 0 || glob != out || list != out {
		t.Errorf("glob (exit %d) or file list (exit %d) reads differently from the directory", code, code2)
	}
}

func TestRunReportJSONHasRanks(t *testing.T) {
	dir := genRun(t, 1)
	out, errOut, code := runCLI(t, nil, "report", "--format", "json", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Rank  int              `json:"rank"`
		Ranks []map[string]any `json:"ranks"`
		Dist  struct {
			WorldSize int `json:"world_size"`
		} `json:"distributed"`
		Findings []struct {
			ID    string `json:"id"`
			Ranks []int  `json:"ranks"`
		} `json:"findings"`
		Kernels []any `json:"kernels"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Ranks) != 3 || doc.Dist.WorldSize != 3 || len(doc.Kernels) == 0 {
		t.Fatalf("ranks %d, world size %d, kernels %d", len(doc.Ranks), doc.Dist.WorldSize, len(doc.Kernels))
	}
	for _, k := range []string{"rank", "comm_kernel_us", "exposed_comm_us", "wait_us", "transfer_us", "start_skew_us"} {
		if _, ok := doc.Ranks[0][k]; !ok {
			t.Errorf("ranks[0] has no %q", k)
		}
	}
	if len(doc.Findings) == 0 || doc.Findings[0].ID != "straggler" || len(doc.Findings[0].Ranks) != 1 || doc.Findings[0].Ranks[0] != 1 {
		t.Errorf("first finding %+v, want the straggler on rank 1", doc.Findings)
	}
	for _, f := range doc.Findings {
		if len(f.Ranks) == 0 {
			t.Errorf("finding %s without ranks", f.ID)
		}
	}
	md, _, _ := runCLI(t, nil, "report", dir)
	html, _, _ := runCLI(t, nil, "report", "--format", "html", dir)
	if !strings.Contains(md, "## Ranks") || !strings.Contains(md, "### Straggler") || !strings.Contains(html, "Wait in collectives") {
		t.Errorf("report lacks the Ranks section or its chart")
	}
}

func TestRunBalancedMissingRankAndBadRank(t *testing.T) {
	dir := genRun(t, -1)
	out, _, code := runCLI(t, nil, "findings", dir)
	if code != 0 || strings.Contains(out, "[straggler]") {
		t.Errorf("balanced run: exit %d\n%s", code, out)
	}
	os.Remove(filepath.Join(dir, "rank2.pt.trace.json.gz"))
	out, errOut, code := runCLI(t, nil, "info", dir)
	if code != 0 || !strings.Contains(out, "missing    ranks [2] of world size 3") {
		t.Errorf("missing rank: exit %d %s\n%s", code, errOut, out)
	}
	os.WriteFile(filepath.Join(dir, "rank2.pt.trace.json"), []byte(`{"traceEvents":[{"ph":"X",`), 0o644)
	// One unreadable rank: the rest are analyzed and the run is marked
	// incomplete, naming the file (issue 27).
	for _, cmd := range []string{"info", "findings", "report"} {
		out, errOut, code = runCLI(t, nil, cmd, dir)
		if code != 0 || !strings.Contains(out, "incomplete run: a rank file was not read: "+filepath.Join(dir, "rank2.pt.trace.json")) {
			t.Errorf("broken rank: %s: exit %d, %q\n%s", cmd, code, errOut, out)
		}
	}
	// One rank file alone is a trace, read exactly as before.
	one, _, code := runCLI(t, nil, "findings", filepath.Join(dir, "rank0.pt.trace.json.gz"))
	if code != 0 || strings.Contains(one, "ranks of") {
		t.Errorf("single file read as a run: exit %d\n%s", code, one)
	}
}

func TestRunDiff(t *testing.T) {
	a, b := genRun(t, -1), genRun(t, 1)
	out, errOut, code := runCLI(t, nil, "diff", a, b)
	if code != 0 || !strings.Contains(out, "Every rank per step") || !strings.Contains(out, "new straggler rank 1") {
		t.Fatalf("exit %d %s\n%s", code, errOut, out)
	}
	if _, _, code := runCLI(t, nil, "diff", "--fail-on-regression", "5", a, b); code != exitGate {
		t.Errorf("a new straggler passes the gate: exit %d", code)
	}
	js, _, code := runCLI(t, nil, "diff", "--format", "json", a, b)
	var doc struct {
		Run struct {
			Rows []struct {
				Metric string  `json:"metric"`
				Rank   string  `json:"rank"`
				Base   float64 `json:"base_median_us"`
				New    float64 `json:"new_median_us"`
			} `json:"rows"`
		} `json:"run_diff"`
	}
	if err := json.Unmarshal([]byte(js), &doc); code != 0 || err != nil {
		t.Fatalf("json diff: exit %d, %v", code, err)
	}
	// The delayed run's ranks 0 and 2 wait for rank 1 about 6 ms a step,
	// spinning with nothing else to run; rank 1 is that late.
	seen := 0
	for _, r := range doc.Run.Rows {
		if r.Metric == "peer_wait_us" && r.Rank == "0" || r.Metric == "late_us" && r.Rank == "1" {
			seen++
			if r.New-r.Base < 5000 || r.New-r.Base > 7000 {
				t.Errorf("rank %s %s %.0f → %.0f µs, want about +6000", r.Rank, r.Metric, r.Base, r.New)
			}
		}
	}
	if seen != 2 {
		t.Errorf("rows missing: %s", js)
	}
}

// TestRunDiffProvesCrossRankFix: `diff BASE FIX` of issue 30's recorded
// 4-rank runs reads each resolved cross-rank finding against the ledger
// line it names on the described rank (rank 0 waits for the straggler;
// a slow link is its exposed communication), as a rank's own findings
// are: delivered within 0.67–1.5× of predicted.
func TestRunDiffProvesCrossRankFix(t *testing.T) {
	for _, c := range []struct{ base, fix, id, line string }{
		{"ddp4_straggler", "ddp4_balanced", "straggler", "peer_wait"},
		{"ddp4_slowlink", "ddp4_balanced", "comm-bandwidth", "communication"},
		{"moe4_skewed", "moe4_balanced", "alltoall-imbalance", "peer_wait"},
	} {
		base, fix := filepath.Join("../../fixtures/runs", c.base), filepath.Join("../../fixtures/runs", c.fix)
		if _, err := os.Stat(base); err != nil {
			t.Skip("issue 30's runs are not on this machine")
		}
		js, errOut, code := runCLI(t, nil, "diff", "--format", "json", base, fix)
		var doc struct {
			Rank struct {
				Findings struct {
					Resolved []struct {
						ID          string   `json:"id"`
						Lines       []string `json:"ledger_lines"`
						Predicted   float64  `json:"base_saving_us"`
						Delivered   float64  `json:"delivered_us"`
						OverPredict float64  `json:"delivered_over_predicted"`
					} `json:"resolved"`
				} `json:"findings"`
			} `json:"rank_diff"`
		}
		if err := json.Unmarshal([]byte(js), &doc); code != 0 || err != nil {
			t.Fatalf("%s: exit %d %v %s", c.base, code, err, errOut)
		}
		found := false
		for _, f := range doc.Rank.Findings.Resolved {
			if f.ID != c.id {
				continue
			}
			found = true
			if len(f.Lines) != 1 || f.Lines[0] != c.line {
				t.Errorf("%s %s names lines %v, want [%s]", c.base, c.id, f.Lines, c.line)
			}
			if r := f.OverPredict; r < 0.67 || r > 1.5 {
				t.Errorf("%s %s: predicted %.0f µs, delivered %.0f µs (%.2f×)", c.base, c.id, f.Predicted, f.Delivered, r)
			}
		}
		if !found {
			t.Errorf("%s → %s: %s not resolved: %s", c.base, c.fix, c.id, js[:min(len(js), 400)])
		}
	}
}

// TestRunReportPipelineSummary: the executive summary of a pipeline
// stage calls its waiting the pipeline's bubble (not a late rank to fix),
// names no NCCL range the costliest (its kernels mostly wait), and the
// leading category's top kernel is of that category (the spinning
// send/recv kernel was named the GEMMs' top kernel).
func TestRunReportPipelineSummary(t *testing.T) {
	dir := "../../fixtures/runs/pp4_1f1b"
	if _, err := os.Stat(dir); err != nil {
		t.Skip("issue 30's runs are not on this machine")
	}
	out, errOut, code := runCLI(t, nil, "report", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	sum := out[strings.Index(out, "## Executive summary"):strings.Index(out, "## Ranks")]
	for _, want := range []string{"waiting for a neighbouring pipeline stage", "GEMM kernels take", "launched by `aten::"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	for _, bad := range []string{"fix the rank the others wait for", "`nccl:coalesced` is the costliest range", "the top kernel `ncclDevKernel"} {
		if strings.Contains(sum, bad) {
			t.Errorf("summary says %q:\n%s", bad, sum)
		}
	}
	if !strings.Contains(out, "The run's cross-rank finding is ranked with rank 0's own") {
		t.Errorf("the Ranks section does not count the pipeline-bubble finding")
	}
}

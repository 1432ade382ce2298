package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// export writes every table for good inputs, exits 2 naming a broken one
// after exporting the rest, and reports up-to-date inputs on a rerun.
func TestExportCommand(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	bad := filepath.Join(in, "broken.json")
	if err := os.WriteFile(bad, []byte(`{"traceEvents": [{"ph": "X", "name": `), 0o644); err != nil {
		t.Fatal(err)
	}
	good := "../../fixtures/fusedlinear_naive.json.gz"
	stdout, stderr, code := runCLI(t, nil, "export", "-o", out, good, bad)
	if code != exitUsageOrBad || !strings.Contains(stderr, bad) || !strings.Contains(stderr, "byte") {
		t.Errorf("exit %d, stderr %q: want 2 and an error naming %s and the byte offset", code, stderr, bad)
	}
	if !strings.Contains(stdout, "fusedlinear_naive: 25 kernels") || !strings.Contains(stdout, "1 traces exported, 0 up to date, 1 failed") {
		t.Errorf("stdout: %s", stdout)
	}
	for _, tbl := range []string{"kernels", "ops", "steps", "ledger", "ledger_segments", "collectives", "findings", "runs"} {
		if _, err := os.Stat(filepath.Join(out, tbl, "fusedlinear_naive.parquet")); err != nil {
			t.Error(err)
		}
	}
	stdout, _, code = runCLI(t, nil, "export", "-o", out, good)
	if code != exitOK || !strings.Contains(stdout, "fusedlinear_naive: up to date") {
		t.Errorf("rerun: exit %d, stdout %s", code, stdout)
	}
	_, stderr, code = runCLI(t, nil, "export", "-o", t.TempDir(), "--max-memory", "64KB", "../../fixtures/nanobragg_compile.json.gz")
	if code != exitUsageOrBad || !strings.Contains(stderr, "nanobragg_compile.json.gz") || !strings.Contains(stderr, "--max-memory") {
		t.Errorf("over the memory budget: exit %d, stderr %q", code, stderr)
	}
	for _, args := range [][]string{{"export"}, {"export", "--format", "csv", good}, {"export", "-j", "-1", good}} {
		if _, stderr, code := runCLI(t, nil, args...); code != exitUsageOrBad || !strings.Contains(stderr, "usage: tracelens export") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// A run directory is exported as one job: each rank's line counts its
// collectives and names the job. A job with two traces of one rank is
// exported as lone traces, with one note saying why.
func TestExportJob(t *testing.T) {
	stdout, stderr, code := runCLI(t, nil, "export", "-o", t.TempDir(), "../../fixtures/runs/two_groups")
	if code != exitOK || !strings.Contains(stdout, "two_groups__rank0: 581 kernels") ||
		!strings.Contains(stdout, "58 collectives (job two_groups)") || !strings.Contains(stdout, "57 collectives (job two_groups)") {
		t.Errorf("exit %d, stdout %s, stderr %s", code, stdout, stderr)
	}
	in := filepath.Join(t.TempDir(), "twice")
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../../fixtures/runs/two_groups/rank0.pt.trace.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"rank0.pt.trace.json.gz", "rank1.pt.trace.json.gz"} {
		if err := os.WriteFile(filepath.Join(in, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stdout, stderr, code = runCLI(t, nil, "export", "-o", t.TempDir(), in)
	if code != exitOK || !strings.Contains(stdout, "note: job twice not matched across ranks") || !strings.Contains(stdout, "rank1.pt.trace.json.gz") ||
		!strings.Contains(stdout, "2 traces exported, 0 up to date, 0 failed") || strings.Contains(stdout, "collectives (job") {
		t.Errorf("rank 0 twice: exit %d, stdout %s, stderr %q", code, stdout, stderr)
	}
	if n := strings.Count(stdout, "note:"); n != 1 {
		t.Errorf("the job's note is said %d times: %s", n, stdout)
	}
}

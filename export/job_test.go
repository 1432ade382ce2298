package export_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/tracelens/tracelens/export"
)

// The ranks of a run directory are exported as one job: rank columns from
// distributedInfo, collectives matched across ranks; a changed rank makes
// every rank of its job export again (waits depend on all of them), and
// a rank the job cannot be loaded with (two traces of rank 0) fails every
// rank of the job, naming the files, and leaves no tables of them.
func TestJobResumeAndFailure(t *testing.T) {
	in, out := filepath.Join(t.TempDir(), "job"), t.TempDir()
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFixture(t, "runs/two_groups/rank0.pt.trace.json.gz", in, "rank0.pt.trace.json.gz")
	r1 := copyFixture(t, "runs/two_groups/rank1.pt.trace.json.gz", in, "rank1.pt.trace.json.gz")
	if got := statuses(exportAll(t, out, false, in)); got != "job__rank0:exported job__rank1:exported" {
		t.Fatalf("first export: %s", got)
	}
	runs, err := parquet.ReadFile[export.RunRow](filepath.Join(out, "runs", "job__rank1.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if r := runs[0]; r.Job == nil || *r.Job != "job" || r.Rank == nil || *r.Rank != 1 || r.WorldSize == nil || *r.WorldSize != 2 ||
		r.RankFrom == nil || *r.RankFrom != "distributedInfo" {
		t.Errorf("runs row of rank 1: %+v", r)
	}
	colls, err := parquet.ReadFile[export.CollectiveRow](filepath.Join(out, "collectives", "job__rank1.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	matched := 0
	for _, c := range colls {
		if c.Matched {
			matched++
			if c.WaitNs == nil || c.Participants == nil || *c.Participants != 2 || c.Seq == nil || c.PGName == nil {
				t.Errorf("matched collective without its cross-rank columns: %+v", c)
			}
		}
	}
	if matched != 50 { // two_groups: 10 + 40 collectives in 5 steps (fixtures/runs/README.md)
		t.Errorf("rank 1 has %d matched collectives, want 50", matched)
	}
	if got := statuses(exportAll(t, out, false, in)); got != "job__rank0:up to date job__rank1:up to date" {
		t.Fatalf("second export: %s", got)
	}
	copyFixture(t, "runs/ddp_host_straggler/rank1.pt.trace.json.gz", in, "rank1.pt.trace.json.gz")
	if got := statuses(exportAll(t, out, false, in)); got != "job__rank0:exported job__rank1:exported" {
		t.Fatalf("after changing rank 1: %s", got)
	}
	copyFixture(t, "runs/two_groups/rank0.pt.trace.json.gz", in, "rank1.pt.trace.json.gz")
	outs := exportAll(t, out, false, in)
	if got := statuses(outs); got != "job__rank0:failed job__rank1:failed" {
		t.Fatalf("with rank 0 twice: %s", got)
	}
	if err := outs[1].Err.Error(); !strings.Contains(err, r1) || !strings.Contains(err, "rank 0") {
		t.Errorf("error %q names neither the file nor the rank", err)
	}
	for _, tbl := range export.Tables() {
		if _, err := os.Stat(filepath.Join(out, tbl, "job__rank1.parquet")); err == nil {
			t.Errorf("%s still holds rank 1's table from before its job broke", tbl)
		}
	}
}

package export_test

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/tracelens/tracelens/export"
)

// The ranks of a run directory are exported as one job: rank columns from
// distributedInfo, collectives matched across ranks; a changed rank makes
// every rank of its job export again (waits depend on all of them). A job
// that cannot be loaded (two traces of rank 0, as several profiling
// cycles in one directory give) is exported as lone traces, each with a
// note naming the files, and stays up to date that way until it changes.
func TestJobResumeAndLoneFallback(t *testing.T) {
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
	if got := statuses(outs); got != "job__rank0:exported job__rank1:exported" {
		t.Fatalf("with rank 0 twice: %s", got)
	}
	if note := outs[1].Note; !strings.Contains(note, r1) || !strings.Contains(note, "rank 0") || !strings.Contains(note, "lone traces") {
		t.Errorf("note %q names neither the file nor the rank, or says not what was done", note)
	}
	runs, err = parquet.ReadFile[export.RunRow](filepath.Join(out, "runs", "job__rank1.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if r := runs[0]; r.Job != nil || r.Rank != nil || r.WorldSize != nil || r.RankFrom != nil {
		t.Errorf("runs row of a lone trace has rank columns: %+v", r)
	}
	if colls, err := parquet.ReadFile[export.CollectiveRow](filepath.Join(out, "collectives", "job__rank1.parquet")); err != nil || len(colls) != 0 {
		t.Errorf("a lone trace has %d collectives rows (%v)", len(colls), err)
	}
	if got := statuses(exportAll(t, out, false, in)); got != "job__rank0:up to date job__rank1:up to date" {
		t.Fatalf("rerun with rank 0 twice: %s", got)
	}
	copyFixture(t, "runs/two_groups/rank1.pt.trace.json.gz", in, "rank1.pt.trace.json.gz")
	if got := statuses(exportAll(t, out, false, in)); got != "job__rank0:exported job__rank1:exported" {
		t.Fatalf("after mending rank 1: %s", got)
	}
	runs, err = parquet.ReadFile[export.RunRow](filepath.Join(out, "runs", "job__rank1.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if r := runs[0]; r.Rank == nil || *r.Rank != 1 {
		t.Errorf("runs row of rank 1 after mending it: %+v", r)
	}
}

// stripDistributedInfo writes fixture's trace into dir under name without
// its distributedInfo object.
func stripDistributedInfo(t *testing.T, fixture, dir, name string) {
	t.Helper()
	f, err := os.Open(filepath.Join("../fixtures", fixture))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.NewDecoder(zr).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc["distributedInfo"]; !ok {
		t.Fatalf("%s has no distributedInfo", fixture)
	}
	delete(doc, "distributedInfo")
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Ranks whose traces do not say the world size (no distributedInfo: the
// rank comes from the file name) are exported with the size the job
// settles, from a second read, and get the same rows otherwise as when
// their traces say it.
func TestJobSettlesWorldSize(t *testing.T) {
	in, out := filepath.Join(t.TempDir(), "bare"), t.TempDir()
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	stripDistributedInfo(t, "runs/multirank_ddp/rank0.pt.trace.json.gz", in, "rank0.json")
	stripDistributedInfo(t, "runs/multirank_ddp/rank1.pt.trace.json.gz", in, "rank1.json")
	if got := statuses(exportAll(t, out, false, in, "../fixtures/runs/multirank_ddp")); got !=
		"bare__rank0:exported bare__rank1:exported multirank_ddp__rank0:exported multirank_ddp__rank1:exported" {
		t.Fatalf("export: %s", got)
	}
	for _, rank := range []string{"rank0", "rank1"} {
		runs, err := parquet.ReadFile[export.RunRow](filepath.Join(out, "runs", "bare__"+rank+".parquet"))
		if err != nil {
			t.Fatal(err)
		}
		if r := runs[0]; r.WorldSize == nil || *r.WorldSize != 2 || r.RankFrom == nil || *r.RankFrom != "file name" || r.Rank == nil || "rank"+strconv.Itoa(int(*r.Rank)) != rank {
			t.Errorf("%s: runs row %+v", rank, r)
		}
		kernels, err := parquet.ReadFile[export.KernelRow](filepath.Join(out, "kernels", "bare__"+rank+".parquet"))
		if err != nil {
			t.Fatal(err)
		}
		want, err := parquet.ReadFile[export.KernelRow](filepath.Join(out, "kernels", "multirank_ddp__"+rank+".parquet"))
		if err != nil {
			t.Fatal(err)
		}
		if len(kernels) != len(want) || len(kernels) == 0 || kernels[0].WorldSize == nil || *kernels[0].WorldSize != 2 {
			t.Errorf("%s: %d kernel rows (world size %v), with distributedInfo %d", rank, len(kernels), kernels[0].WorldSize, len(want))
		}
		colls, err := parquet.ReadFile[export.CollectiveRow](filepath.Join(out, "collectives", "bare__"+rank+".parquet"))
		if err != nil {
			t.Fatal(err)
		}
		wantColls, err := parquet.ReadFile[export.CollectiveRow](filepath.Join(out, "collectives", "multirank_ddp__"+rank+".parquet"))
		if err != nil {
			t.Fatal(err)
		}
		if len(colls) != len(wantColls) || len(colls) == 0 {
			t.Fatalf("%s: %d collectives, with distributedInfo %d", rank, len(colls), len(wantColls))
		}
		for i := range colls {
			g, w := colls[i], wantColls[i]
			if g.Matched != w.Matched || (g.WaitNs == nil) != (w.WaitNs == nil) || g.WaitNs != nil && *g.WaitNs != *w.WaitNs || g.DurationNs != w.DurationNs {
				t.Errorf("%s collective %d: %+v, with distributedInfo %+v", rank, i, g, w)
				break
			}
		}
	}
}

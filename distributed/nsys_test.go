package distributed

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/fixtures/sharedtest"
	"github.com/tracelens/tracelens/ingest"
)

// TestNsysProcessesRun: an Nsight Systems export holding two processes'
// GPU work is a run of two ranks. No shared export holds two, so one is
// made from a real export merged with itself as processes 1001 and 1002;
// each rank is the original's 1221 kernels, and the full model of a rank
// is read back by its Source.
func TestNsysProcessesRun(t *testing.T) {
	raw := sharedtest.NsysExport(t, "caoye310__Lower-Triangular-Solves__la.sqlite.gz")
	p := filepath.Join(t.TempDir(), "mpi.sqlite")
	out, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	one := func(pid int64) ingest.NsysSource {
		return ingest.NsysSource{R: bytes.NewReader(raw), Size: int64(len(raw)), Copies: 1, PID: pid}
	}
	if _, err := ingest.WriteNsys(out, []ingest.NsysSource{one(1001), one(1002)}); err != nil {
		t.Fatal(err)
	}
	out.Close()
	if !IsRun([]string{p}) {
		t.Fatal("a two-process export is not taken as a run")
	}
	run, err := Load([]string{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Ranks) != 2 {
		t.Fatalf("%d ranks, want 2", len(run.Ranks))
	}
	for i, r := range run.Ranks {
		n := 0
		for _, k := range r.Kernels {
			n += k.Count
		}
		if r.Rank != i || n != 1221 || !strings.HasSuffix(r.Source, []string{"@pid=1001", "@pid=1002"}[i]) || !strings.HasPrefix(r.RankFrom, "nsys process") {
			t.Errorf("rank %d: rank %d from %q, %d kernels, source %s", i, r.Rank, r.RankFrom, n, r.Source)
		}
		full, err := ReadRankTrace(r.Source)
		if err != nil || full.Kernels() != 1221 {
			t.Errorf("rank %d read again: %v", i, err)
		}
	}
	// A single-process export is a trace, not a run.
	single := filepath.Join(t.TempDir(), "one.sqlite")
	os.WriteFile(single, raw, 0o644)
	if IsRun([]string{single}) {
		t.Error("a one-process export is taken as a run")
	}
}

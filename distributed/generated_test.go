package distributed

import (
	"strings"
	"testing"

	"github.com/tracelens/tracelens/fixtures/genranks"
)

// sourceRanks parses the real DDP run's rank traces (the generator's
// input), skipping when this machine has none.
func sourceRanks(t testing.TB) []*genranks.Source {
	t.Helper()
	srcs, ok, err := genranks.ParseFirst("../fixtures/runs/ddp/*.json*", "../fixtures/runs/multirank_ddp/*.json*", "/work/shared/traces/multirank_ddp/*.json*")
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Skip("no DDP rank traces on this machine")
	}
	return srcs
}

// TestGeneratedStraggler: 4 ranks made from the real DDP ranks, rank 2
// delayed 8 ms per step on the host, clocks 3 ms apart per rank: the
// offsets are found and removed, rank 2 is named a host straggler late by
// the injected delay, and the delay's range is named as the cause.
func TestGeneratedStraggler(t *testing.T) {
	srcs := sourceRanks(t)
	dir := t.TempDir()
	const delay = 8_000_000
	if _, err := genranks.Generate(dir, srcs, genranks.Options{Ranks: 4, Size: 1, Straggler: 2, Delay: delay, ClockSkew: 3_000_000, Gzip: true}); err != nil {
		t.Fatal(err)
	}
	run, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !run.ClockCorrected || run.Clocks[3].Offset < 8_950_000 || run.Clocks[3].Offset > 9_050_000 {
		// 9 ms injected, plus the real ranks' own offset (-23 µs).
		t.Errorf("clock of rank 3: %+v, want 9 ms", run.Clocks[3])
	}
	res := Analyze(run, ReadRankTrace, Options{})
	if len(res.Findings) == 0 || res.Findings[0].ID != IDStraggler || res.Findings[0].Ranks[0] != 2 {
		t.Fatalf("first finding %+v, want the straggler rank 2", res.Findings)
	}
	s := res.Straggler
	if s == nil || s.Kind != HostStraggler {
		t.Fatalf("explanation %+v, want a host straggler", s)
	}
	// Late per step: the injected delay plus the source ranks' own
	// imbalance (under 1 ms per step in the real DDP run).
	if s.LateUs < 7000 || s.LateUs > 9500 {
		t.Errorf("late %.0f µs per step, want about 8000", s.LateUs)
	}
	found := false
	for _, d := range s.Differences {
		if d.What == "annotation" && d.Name == "dataloader.next" {
			found = true
			// The injected range lasts the delay minus 2 µs.
			if d.StragglerUs < 7990 || d.StragglerUs > 8000 || d.ReferenceUs != 0 {
				t.Errorf("dataloader.next: %+v, want 7998 µs vs 0", d)
			}
		}
	}
	if !found {
		t.Errorf("dataloader.next not among the differences: %+v", s.Differences)
	}
	if !strings.Contains(s.Sentence, "dataloader.next") || !strings.Contains(s.Sentence, "on the host") {
		t.Errorf("sentence does not name the cause: %s", s.Sentence)
	}
	t.Log(s.Sentence)
}

// TestGeneratedBalanced: the same ranks without a straggler give no
// straggler finding.
func TestGeneratedBalanced(t *testing.T) {
	srcs := sourceRanks(t)
	dir := t.TempDir()
	if _, err := genranks.Generate(dir, srcs, genranks.Options{Ranks: 4, Size: 1, Straggler: -1}); err != nil {
		t.Fatal(err)
	}
	run, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range Analyze(run, ReadRankTrace, Options{}).Findings {
		if f.ID == IDStraggler {
			t.Errorf("straggler on a balanced run: %s", f.Title)
		}
	}
}

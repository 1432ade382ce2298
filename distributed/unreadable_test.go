package distributed

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnreadableRankLeavesRunIncomplete: one corrupt rank file no longer
// blocks the run (issue 27): the other ranks are read and analyzed, the
// run carries one Unreadable line naming the file and why, first among
// its Warnings (which info, findings, report, the TUI and the JSON all
// show). With no rank readable the read still fails. Ranks one
// directory each are found too.
func TestUnreadableRankLeavesRunIncomplete(t *testing.T) {
	for _, nested := range []bool{false, true} {
		dir := t.TempDir()
		sub := func(name string) string {
			if !nested {
				return dir
			}
			d := filepath.Join(dir, name)
			os.MkdirAll(d, 0o755)
			return d
		}
		writeRank(t, sub("r0"), "rank0.json", 0, 3, 4, 1000, allreduces(4, 1000, 500, 100, true))
		writeRank(t, sub("r1"), "rank1.json", 1, 3, 4, 1000, allreduces(4, 1000, 520, 80, true))
		bad := filepath.Join(sub("r2"), "rank2.json")
		if err := os.WriteFile(bad, []byte("garbage"), 0o644); err != nil {
			t.Fatal(err)
		}
		run, err := Load([]string{dir}, Options{})
		if err != nil {
			t.Fatalf("nested %v: %v", nested, err)
		}
		if len(run.Ranks) != 2 || len(run.Unreadable) != 1 || !strings.Contains(run.Unreadable[0], bad) ||
			!strings.Contains(run.Unreadable[0], "invalid JSON") || len(run.Warnings) == 0 || run.Warnings[0] != run.Unreadable[0] {
			t.Errorf("nested %v: %d ranks, unreadable %q, warnings %q", nested, len(run.Ranks), run.Unreadable, run.Warnings)
		}
		if len(run.Missing) != 1 || run.Missing[0] != 2 {
			t.Errorf("nested %v: missing %v, want [2]", nested, run.Missing)
		}
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "rank0.json"), []byte("garbage"), 0o644)
	os.WriteFile(filepath.Join(dir, "rank1.json"), []byte("{"), 0o644)
	if _, err := Load([]string{dir}, Options{}); err == nil {
		t.Error("no rank readable: want an error")
	}
}

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracelens/tracelens/jsonout"
	"github.com/tracelens/tracelens/membudget"
)

// TestDiffSideBySideMatchesSequential: diff reads and analyzes BASE and
// NEW side by side under one collector scope; its analyses and errors are
// those of the reads one after the other, each as every command reads.
func TestDiffSideBySideMatchesSequential(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"traceEvents": [{"ph": "X", "ts": 1, "dur": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	pairs := [][2]string{
		{fixture("recorded/pairs/optim_encoder_base.json.gz"), fixture("recorded/pairs/optim_encoder_new.json.gz")},
		{fixture("eggroll_hooks.json.gz"), fixture("eggroll_direct.json.gz")},
		{fixture("eggroll_hooks.json.gz"), bad},
		{bad, fixture("eggroll_hooks.json.gz")},
	}
	for _, p := range pairs {
		e := &env{}
		if !pairSideBySide(e, p[:]) {
			t.Fatalf("%v: not read side by side", p)
		}
		side, sideErr := loadPairSideBySide(e, p[:])
		seq, seqErr := loadPairInOrder(e, p[:])
		if fmt.Sprint(sideErr) != fmt.Sprint(seqErr) {
			t.Errorf("%v: side by side %v, one after the other %v", p, sideErr, seqErr)
			continue
		}
		if seqErr != nil {
			continue
		}
		for i := range side {
			var a, b bytes.Buffer
			if err := jsonout.Write(&a, side[i]); err != nil {
				t.Fatal(err)
			}
			if err := jsonout.Write(&b, seq[i]); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Errorf("%s: the analyses differ side by side and one after the other", p[i])
			}
		}
	}
	out, errOut, code := runCLI(t, nil, "diff", fixture("eggroll_hooks.json.gz"), bad)
	if code != exitUsageOrBad || out != "" || !bytes.Contains([]byte(errOut), []byte("bad.json")) {
		t.Errorf("diff with a bad NEW: exit %d, stdout %q, stderr %q: want exit %d naming bad.json", code, out, errOut, exitUsageOrBad)
	}
}

// TestPairSideBySideOnlyWhereItHelps: standard input, embedded traces,
// directories, missing files and a memory budget the two reads would
// crowd are read one after the other.
func TestPairSideBySideOnlyWhereItHelps(t *testing.T) {
	a, b := fixture("eggroll_hooks.json.gz"), fixture("eggroll_direct.json.gz")
	tight := &env{mem: &memState{budget: membudget.New(pairCollectorLimit([]string{a, b}) * 3 / 2)}}
	roomy := &env{mem: &memState{budget: membudget.New(1 << 40)}}
	for _, c := range []struct {
		name  string
		e     *env
		paths []string
		want  bool
	}{
		{"two files", &env{}, []string{a, b}, true},
		{"within the budget", roomy, []string{a, b}, true},
		{"standard input", &env{}, []string{"-", b}, false},
		{"embedded", &env{}, []string{embeddedPrefix + "x", b}, false},
		{"a directory", &env{}, []string{a, filepath.Dir(b)}, false},
		{"missing", &env{}, []string{a, b + ".missing"}, false},
		{"tight budget", tight, []string{a, b}, false},
	} {
		if got := pairSideBySide(c.e, c.paths); got != c.want {
			t.Errorf("%s: side by side %v, want %v", c.name, got, c.want)
		}
	}
}

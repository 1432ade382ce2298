package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/membudget"
)

// diffAt runs `diff --format json BASE NEW` in process on procs cores.
func diffAt(t *testing.T, procs int, base, next string) (string, string, int) {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	return runCLI(t, nil, "diff", "--format", "json", base, next)
}

// TestDiffSideBySideMatchesSequential: on enough cores diff reads and
// analyzes BASE and NEW side by side; its output, exit status and errors
// are those of the reads one after the other.
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
		if !pairSideBySide(&env{}, p[:], sideBySideProcs) {
			t.Fatalf("%v: not read side by side on %d cores", p, sideBySideProcs)
		}
		seqOut, seqErr, seqCode := diffAt(t, 1, p[0], p[1])
		out, errOut, code := diffAt(t, sideBySideProcs, p[0], p[1])
		if code != seqCode || out != seqOut || errOut != seqErr {
			t.Errorf("%v: side by side exit %d, stderr %q, %d bytes out; one after the other exit %d, stderr %q, %d bytes out",
				p, code, errOut, len(out), seqCode, seqErr, len(seqOut))
		}
		if strings.Contains(p[0]+p[1], "bad") && (code != exitUsageOrBad || !strings.Contains(errOut, "bad.json")) {
			t.Errorf("%v: exit %d, stderr %q: want exit %d naming bad.json", p, code, errOut, exitUsageOrBad)
		}
	}
}

// TestPairSideBySideOnlyWhereItHelps: standard input, embedded traces,
// two cores and a memory budget the two reads would crowd keep the reads
// one after the other.
func TestPairSideBySideOnlyWhereItHelps(t *testing.T) {
	a, b := fixture("eggroll_hooks.json.gz"), fixture("eggroll_direct.json.gz")
	tight := &env{mem: &memState{budget: membudget.New(pairCollectorLimit([]string{a, b}) * 3 / 2)}}
	roomy := &env{mem: &memState{budget: membudget.New(1 << 40)}}
	for _, c := range []struct {
		name  string
		e     *env
		paths []string
		procs int
		want  bool
	}{
		{"files on 16 cores", &env{}, []string{a, b}, 16, true},
		{"within the budget", roomy, []string{a, b}, 16, true},
		{"two cores", &env{}, []string{a, b}, 2, false},
		{"standard input", &env{}, []string{"-", b}, 16, false},
		{"embedded", &env{}, []string{embeddedPrefix + "x", b}, 16, false},
		{"a directory", &env{}, []string{a, filepath.Dir(b)}, 16, false},
		{"missing", &env{}, []string{a, b + ".missing"}, 16, false},
		{"tight budget", tight, []string{a, b}, 16, false},
	} {
		if got := pairSideBySide(c.e, c.paths, c.procs); got != c.want {
			t.Errorf("%s: side by side %v, want %v", c.name, got, c.want)
		}
	}
}

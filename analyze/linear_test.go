package analyze

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tracelens/tracelens/fixtures/cputime"
	"github.com/tracelens/tracelens/fixtures/sharedtest"
	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
)

// TestRunLinearInEvents runs the analysis over an Nsight Systems export
// made of n and 4n copies of a real one's events and checks that the 4n
// run costs less than 8 times the CPU of the n run: linear work costs 4×,
// a pass over every event per copy (what made report take 40 s on a 10 MB
// export: hostCopies took the trace's span, a walk of every event, once
// per copy) 16×. CPU time of this process, not wall time, so other
// processes' load does not move it.
func TestRunLinearInEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and analyzes two exports of 25 and 100 copies")
	}
	raw := sharedtest.NsysExport(t, "caoye310__Lower-Triangular-Solves__la.sqlite.gz")
	cost := func(copies int) time.Duration {
		tr := genNsys(t, raw, copies)
		best := time.Duration(1 << 62)
		for range 3 { // the least of three: the collector's timing varies
			before := cpuTime(t)
			if _, err := Run(tr, Config{}); err != nil {
				t.Fatal(err)
			}
			best = min(best, cpuTime(t)-before)
		}
		return best
	}
	small, large := cost(25), cost(100)
	t.Logf("analysis CPU: 25 copies %v, 100 copies %v (%.1f×)", small, large, float64(large)/float64(small))
	if large > 8*small {
		t.Errorf("4× the events cost %.1f× the CPU (%v vs %v): some pass is not linear in the events", float64(large)/float64(small), large, small)
	}
}

// genNsys writes an export of copies of raw's events and reads it back.
func genNsys(t *testing.T, raw []byte, copies int) *trace.Trace {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gen.sqlite")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.WriteNsys(f, []ingest.NsysSource{{R: bytes.NewReader(raw), Size: int64(len(raw)), Copies: copies}}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	tr, err := ingest.ReadFile(p, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime(t *testing.T) time.Duration {
	d, err := cputime.Process()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

package analyze

import (
	"path/filepath"
	"testing"

	"github.com/tracelens/tracelens/ingest"
)

// StepStats.Bottleneck is analyze's one judgment of what limits the step,
// with the analyzers' thresholds: host below LaunchBoundMaxBusy GPU busy,
// communication when collectives fill what compute leaves, else gpu; ""
// without GPU activity. launch-bound and host-bound fire only on a
// host-bound step.
func TestBottleneck(t *testing.T) {
	files, _ := filepath.Glob("../fixtures/recorded/*.json.gz")
	if len(files) < 10 {
		t.Fatalf("%d fixtures", len(files))
	}
	seen := map[string]int{}
	for _, f := range files {
		tr, err := ingest.ReadFile(f, ingest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(tr, Config{})
		if err != nil {
			t.Fatal(err)
		}
		ss := &r.StepStats
		seen[ss.Bottleneck]++
		switch b := ss.Bottleneck; {
		case b == "":
			if ss.SteadyWallUs > 0 && r.Summary.KernelLaunches > 0 {
				t.Errorf("%s: no bottleneck for a trace with steps and kernels", f)
			}
		case (b == BottleneckHost || b == BottleneckPeer) != (ss.SteadyGPUBusyShare < LaunchBoundMaxBusy):
			t.Errorf("%s: bottleneck %s at %.0f%% GPU busy", f, b, ss.SteadyGPUBusyShare*100)
		case b == BottleneckPeer && LedgerUs(ss.SteadyLedger, LinePeerWait) == 0:
			t.Errorf("%s: peer bottleneck without peer wait", f)
		case b == BottleneckCommunication && (r.Summary.CommunicationUs == 0 || ss.ComputeBound):
			t.Errorf("%s: communication bottleneck without communication", f)
		}
		for _, x := range r.Findings {
			if (x.ID == LaunchBound.Name || x.ID == HostBound.Name) && ss.Bottleneck != BottleneckHost {
				t.Errorf("%s: %s fires on a %q-bound step", f, x.ID, ss.Bottleneck)
			}
		}
	}
	if seen[BottleneckHost] == 0 || seen[BottleneckGPU] == 0 {
		t.Errorf("fixtures cover %v", seen)
	}
}

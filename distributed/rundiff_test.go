package distributed

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/diff"
)

// runDiffExpect is testdata/rundiff.json (rundiff.py): per run, metric,
// rank ("all": pooled), the median per compared step in µs.
type runDiffExpect map[string]map[string]map[string]float64

// scriptMetric maps the script's metric names to CompareRuns'.
var scriptMetric = map[string]string{
	"wall_us": MetricStepWall, "late_us": MetricLate, "peer_wait_us": MetricPeerWait, "transfer_us": MetricTransfer,
	"exposed_transfer_us": MetricExposedTransfer, "exposed_comm_us": MetricExposedComm, "comm_kernel_us": MetricCommKernel,
}

// loadRunSide loads run name from fixtures/runs with its analysis and
// rank 0's analysis with its peer wait, as `tracelens diff` does.
func loadRunSide(t *testing.T, name string) (*Run, *Result, *analyze.Result) {
	t.Helper()
	dir := "../fixtures/runs/" + name
	run, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := Analyze(run, ReadRankTrace, Options{})
	tr, err := ReadRankTrace(run.Ranks[0].Source)
	if err != nil {
		t.Fatal(err)
	}
	r, err := analyze.Run(tr, analyze.Config{PeerWait: run.PeerWaits(0)})
	if err != nil {
		t.Fatal(err)
	}
	Combine(res, r, run.Ranks[0].Rank)
	return run, res, r
}

// TestRunDiff compares a balanced DDP run with a compute-straggler run
// both ways: every rank's per-step figures against rundiff.py, the new
// (resolved) straggler, the gate, and no "GPU busy +88 %" from spinning
// NCCL kernels on the waiting rank.
func TestRunDiff(t *testing.T) {
	if testing.Short() {
		t.Skip("reads four real rank traces")
	}
	raw, err := os.ReadFile("testdata/rundiff.json")
	if err != nil {
		t.Fatal(err)
	}
	var want runDiffExpect
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	sides := map[string][3]any{}
	for _, n := range []string{"multirank_ddp", "ddp_compute_straggler"} {
		run, res, r := loadRunSide(t, n)
		sides[n] = [3]any{run, res, r}
		if got, w := medianBusyLessWait(r), want[n]["gpu_busy_less_peer_wait_us"]["0"]; !(got > 0.97*w && got < 1.03*w) {
			t.Errorf("%s rank 0: GPU busy less peer wait %.1f µs, script %.1f", n, got, w)
		}
	}
	for _, pair := range [][2]string{{"multirank_ddp", "ddp_compute_straggler"}, {"ddp_compute_straggler", "multirank_ddp"}} {
		b, n := sides[pair[0]], sides[pair[1]]
		d := CompareRuns(b[0].(*Run), n[0].(*Run), b[1].(*Result), n[1].(*Result), diff.Options{})
		for sm, m := range scriptMetric {
			for rank, w := range want[pair[0]][sm] {
				row := d.Row(m, rank)
				if row == nil {
					t.Fatalf("%v: no row %s rank %s", pair, m, rank)
				}
				near(t, pair[0]+" "+m+" rank "+rank, row.BaseUs, w, 1)
				near(t, pair[1]+" "+m+" rank "+rank, row.NewUs, want[pair[1]][sm][rank], 1)
			}
		}
		straggler := func(cs []RunFindingChange) bool {
			for _, c := range cs {
				if c.ID == IDStraggler && c.Subject == "rank 1" {
					return true
				}
			}
			return false
		}
		failures, _ := d.Gate(5)
		tripped := strings.Contains(strings.Join(failures, ";"), "new straggler rank 1")
		forward := pair[0] == "multirank_ddp"
		if straggler(d.New) != forward || straggler(d.Resolved) == forward || tripped != forward {
			t.Errorf("%v: straggler new %v resolved %v, gate %q", pair, straggler(d.New), straggler(d.Resolved), failures)
		}
		// The rank diff, as the CLI makes it: analyze counts a waiting
		// rank's spinning as peer wait, not busy.
		rb, rn := b[2].(*analyze.Result), n[2].(*analyze.Result)
		rd, err := diff.Compare(rb, rn, diff.Options{})
		if err != nil {
			t.Fatal(err)
		}
		AddPeerWait(rd, rb, rn, false)
		for _, key := range []string{diff.GPUBusy, diff.BackwardKernel} {
			if m := rd.Metric(key); m != nil && forward && m.Pct > 0 {
				t.Errorf("%v: %s %+.0f%%: the waiting rank's spinning counted as work", pair, m.Name, m.Pct)
			}
		}
		if m := rd.Metric(PeerWaitKey); m == nil || forward != (m.New.Median > m.Base.Median) {
			t.Errorf("%v: peer wait metric %+v", pair, m)
		}
		var out bytes.Buffer
		if err := WriteRunDiff(&out, d, false); err != nil || !strings.Contains(out.String(), "straggler rank 1") {
			t.Errorf("%v: text %q, %v", pair, out.String(), err)
		}
	}
}

// medianBusyLessWait is the median over the steps after the first of a
// rank's GPU busy less its peer_wait ledger line.
func medianBusyLessWait(r *analyze.Result) float64 {
	var v []float64
	for _, s := range r.Steps[1:] {
		v = append(v, s.GPUBusyUs) // analyze counts a rank's spin as waiting
	}
	return diff.Summarize(v).Median
}

package distributed

import (
	"slices"
	"strconv"
	"testing"

	"github.com/tracelens/tracelens/analyze"
)

// TestPeerWaitLedger: analyzed with its peer-wait intervals, each rank's
// step ledgers' peer_wait lines add up to the script's peer wait
// (testdata/expect.py: each matched collective's wait less the rank's
// compute meanwhile), and the waiting rank's steady step shows the spin
// as waiting.
func TestPeerWaitLedger(t *testing.T) {
	exp := loadExpected(t)
	for name, dir := range runDirs(t) {
		want, ok := exp[name]
		if !ok {
			continue
		}
		t.Run(name, func(t *testing.T) {
			run, err := Load([]string{dir}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for i, rk := range run.Ranks {
				tr, err := ReadRankTrace(rk.Source)
				if err != nil {
					t.Fatal(err)
				}
				r, err := analyze.Run(tr, analyze.Config{PeerWait: run.PeerWaits(i)})
				if err != nil {
					t.Fatal(err)
				}
				if err := analyze.Check(r); err != nil {
					t.Errorf("rank %d: %v", rk.Rank, err)
				}
				var got, wall float64
				for _, st := range r.Steps {
					got += analyze.LedgerUs(st.Ledger, analyze.LinePeerWait)
					wall += st.WallUs
				}
				w := want.Ranks[strconv.Itoa(rk.Rank)].PeerWaitUs
				t.Logf("rank %d: peer_wait %.3f µs over %d steps, script %.3f", rk.Rank, got, len(r.Steps), w)
				// No finding of the rank draws on its waiting, and on a
				// rank that mostly waits none exists only because it
				// does (its syncs waiting for the previous all-reduce, a
				// first step long with the peer's lateness). A sync the
				// workload itself makes (an MoE layer reading its token
				// counts, a step timer's event sync) stays a finding when
				// it blocks far less than the rank waits: the wait cannot
				// be what it is made of.
				waits := got > 0.1*wall
				perStep := got / float64(max(len(r.Steps), 1))
				for _, f := range r.Findings {
					byWait := waits && (f.ID == "host-sync" || f.ID == "cold-start") && f.SavingUs > 0.1*perStep
					if slices.Contains(f.LedgerLines, analyze.LinePeerWait) || byWait {
						t.Errorf("rank %d: finding %s (%s) on a rank that waits", rk.Rank, f.ID, f.Title)
					}
				}
				if d := got - w; d > 0.001*wall+1 || d < -(0.001*wall+1) {
					t.Errorf("rank %d: peer_wait %.3f µs over the steps, script %.3f", rk.Rank, got, w)
				}
				if rk.Rank == 0 && name == "ddp_compute_straggler" {
					ss := r.StepStats
					if pw := analyze.LedgerUs(ss.SteadyLedger, analyze.LinePeerWait); pw < 0.4*ss.SteadyWallUs {
						t.Errorf("the waiting rank's steady step waits %.0f µs of %.0f: the spin is not told apart", pw, ss.SteadyWallUs)
					}
				}
			}
		})
	}
}

// TestCollectiveWaitName: analyze recognizes a late rank's finding by
// this SavingFrom when combining a run's savings.
func TestCollectiveWaitName(t *testing.T) {
	r := &analyze.Result{}
	r.StepStats.SteadyWallUs = 100
	own := analyze.Finding{ID: "gpu-idle", SavingUs: 50, SavingFrom: analyze.FromGPUIdle}
	r.Findings = []analyze.Finding{own}
	r.Summary.CombinedSavingUs = 50
	late := analyze.Finding{ID: IDStraggler, SavingUs: 40, SavingFrom: FromCollectiveWait, Ranks: []int{0}}
	r.AddRunFindings(0, []analyze.Finding{late})
	// The late rank's own idle time removes half the step: the straggler
	// fix counts for half of its 40 µs.
	if got := r.Summary.CombinedSavingUs; got < 69.99 || got > 70.01 {
		t.Errorf("combined %.3f µs, want 50 + 40 × 0.5", got)
	}
	r.AddRunFindings(1, []analyze.Finding{late})
	if got := r.Summary.CombinedSavingUs; got < 89.99 || got > 90.01 {
		t.Errorf("described rank 1 waits for rank 0: combined %.3f µs, want 50 + 40", got)
	}
}

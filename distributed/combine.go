package distributed

import "github.com/tracelens/tracelens/analyze"

// Combine makes a run one analysis: rank, the analysis of global rank n
// (the rank a run's faces describe), takes the run's cross-rank findings
// ranked among its own (analyze.Result.AddRunFindings), and res.Findings
// becomes that same ranking, each finding with the ranks it concerns, so
// `findings`, `report`, `tui` and `export` of a run directory read one
// list. res.CombinedSavingUs is the run's combined saving.
func Combine(res *Result, rank *analyze.Result, n int) {
	rank.AddRunFindings(n, res.CrossRankFindings())
	res.Findings = make([]Finding, len(rank.Findings))
	for i, f := range rank.Findings {
		res.Findings[i] = Finding{Finding: f, Ranks: f.Ranks}
	}
	res.Rank = n
	res.CombinedSavingUs = rank.Summary.CombinedSavingUs
	res.CombinedSavingShare = rank.Summary.CombinedSavingShare
}

// CrossRankFindings returns the run's cross-rank findings (not the rank
// findings an earlier Combine ranked among them), each with its Ranks, for
// analyze.Result.AddRunFindings.
func (res *Result) CrossRankFindings() []analyze.Finding {
	cross := make([]analyze.Finding, 0, len(res.Findings))
	for _, f := range res.Findings {
		if f.CrossRank() {
			g := f.Finding
			g.Ranks = f.Ranks
			cross = append(cross, g)
		}
	}
	return cross
}

// CrossRank reports whether f is one of the run's own findings (not a
// rank's, merged in by an earlier Combine).
func (f *Finding) CrossRank() bool {
	switch f.ID {
	case IDStraggler, IDExposedComm, IDCommBandwidth, IDPipelineBubble, IDAllToAllImbalance:
		return true
	}
	return false
}

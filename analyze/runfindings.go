package analyze

import (
	"cmp"
	"slices"
)

// A multi-rank run is one analysis: the Result of the rank a run's faces
// describe, with the run's cross-rank findings (a late rank, exposed
// communication, slow transfers: package distributed) ranked among the
// rank's own by saving, and a combined saving that counts both. Every
// face of a run directory (findings, report, tui, export) reads that one
// ranking, so they agree on what to fix first.

// AddRunFindings makes r, the analysis of rank `rank` of a multi-rank
// run, the run's analysis: it marks r's own findings as found on that
// rank, adds the run's cross-rank findings run (complete: SavingUs,
// Share and Ranks set), ranks all of them by saving as Run does, and
// re-estimates the combined saving. Cross-rank findings draw on other
// ranks' time (the waiting ranks' peer_wait, every rank's exposed
// communication), so they name no line of this rank's ledger; savings out
// of one cross-rank part overlap as findings of one part do, and the two
// kinds add up, at most to the step. Calling it again replaces the
// cross-rank findings added before.
func (r *Result) AddRunFindings(rank int, run []Finding) {
	if r.rankCombined == nil {
		v := r.Summary.CombinedSavingUs
		r.rankCombined = &v
	}
	// A cross-rank part's overlap from an earlier call goes with the
	// findings it indexes.
	r.Overlaps = slices.DeleteFunc(r.Overlaps, func(o Overlap) bool {
		return runFamily(o.SavingFrom) == fromCollectiveWait || runFamily(o.SavingFrom) == fromExposedComm
	})
	kept := r.Findings[:0]
	for _, f := range r.Findings {
		if f.crossRank {
			continue
		}
		if len(f.Ranks) == 0 {
			f.Ranks = []int{rank}
		}
		kept = append(kept, f)
	}
	r.Findings = kept
	// Overlaps index Findings: remember them by identity across the sort.
	pos := make([]int, len(r.Findings))
	for i := range pos {
		pos[i] = i
	}
	for _, f := range run {
		f.crossRank = true
		// Shares are of this Result's step, as the rank's own findings'.
		if step := r.StepStats.SteadyWallUs; step > 0 && f.SavingFrom != FromOneOff {
			f.SavingUs = min(f.SavingUs, step)
			f.Share = shareOf(f.SavingUs, step)
		}
		// The lines say where the described rank's step gains (diff's
		// predicted vs delivered reads them); the saving stays the
		// run's (the median over the waiting ranks, every rank's
		// exposed communication), which that rank's ledger does not
		// bound: Check leaves cross-rank findings to the run's bounds.
		f.LedgerLines = runLedgerLines(&f, rank)
		if f.Measures == nil {
			f.Measures = []Measure{}
		}
		if f.Evidence == nil {
			f.Evidence = []Evidence{}
		}
		r.Findings = append(r.Findings, f)
		pos = append(pos, -1)
	}
	order := make([]int, len(r.Findings))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		fa, fb := &r.Findings[a], &r.Findings[b]
		if c := cmp.Compare(rankUs(fb, &r.StepStats), rankUs(fa, &r.StepStats)); c != 0 {
			return c
		}
		return cmp.Compare(fa.ID, fb.ID)
	})
	sorted := make([]Finding, len(order))
	at := map[int]int{} // old index of a rank finding -> new
	for n, i := range order {
		sorted[n] = r.Findings[i]
		if pos[i] >= 0 {
			at[pos[i]] = n
		}
	}
	r.Findings = sorted
	for k := range r.Overlaps {
		o := &r.Overlaps[k]
		for j, i := range o.Findings {
			o.Findings[j] = at[i]
		}
		slices.Sort(o.Findings)
	}
	r.combineRun(rank)
}

// What cross-rank findings' savings come out of (distributed's From*
// constants). Two families: the waiting ranks' wait (a straggler, a
// pipeline's bubble, an all-to-all's hot rank: one wait, seen three
// ways) and communication no compute hides (a slow link's transfer is
// exposed communication too).
const (
	fromCollectiveWait = "collective wait"
	fromAllToAll       = "all-to-all imbalance"
	fromExposedComm    = "exposed communication"
	fromCommTransfer   = "communication transfer"
)

// runLedgerLines are the lines of the described rank's ledger a
// cross-rank finding's saving comes out of: its peer wait when the rank
// waits for the finding's ranks (a late rank, or the pipeline's bubble,
// which every stage waits through), its exposed communication for slow
// or exposed communication. A finding about the rank itself (it is the
// late one) names none: its fix shortens the others' steps, not its own.
func runLedgerLines(f *Finding, rank int) []string {
	switch runFamily(f.SavingFrom) {
	case fromCollectiveWait:
		if f.ID == idPipelineBubble || !slices.Contains(f.Ranks, rank) {
			return []string{LinePeerWait}
		}
	case fromExposedComm:
		return []string{LineCommunication}
	}
	return []string{}
}

// idPipelineBubble is distributed.IDPipelineBubble.
const idPipelineBubble = "pipeline-bubble"

// runFamily groups cross-rank SavingFrom values whose savings overlap.
func runFamily(from string) string {
	switch from {
	case fromAllToAll:
		return fromCollectiveWait
	case fromCommTransfer:
		return fromExposedComm
	}
	return from
}

// combineRun sets the combined saving of a run's analysis: the rank's own
// findings' combined saving plus the cross-rank findings'. Cross-rank
// savings of one family overlap: together they remove part × (1 −
// Π(1 − saving/part)) of their part, the larger of their largest saving
// and the rank's ledger line for it (peer wait, communication). When the
// described rank is itself late (a cross-rank finding concerns it), its
// own findings out of GPU idle time remove part of the same lateness:
// that finding counts only for what they leave. The total stops short of
// the step by the GPU work no fix removes, as a rank's own does.
func (r *Result) combineRun(rank int) {
	ss := &r.StepStats
	step := ss.SteadyWallUs
	idleLeft := 1.0
	for _, f := range r.Findings {
		if !f.crossRank && step > 0 && (f.SavingFrom == FromGPUIdle || f.SavingFrom == FromHostWaits || f.SavingFrom == FromLaunchGaps) {
			idleLeft *= 1 - min(f.SavingUs/step, 1)
		}
	}
	type part struct {
		findings  []int
		savings   []float64
		sum, most float64
	}
	parts := map[string]*part{}
	var order []string
	for i, f := range r.Findings {
		if !f.crossRank || f.SavingFrom == FromOneOff {
			continue
		}
		saving := f.SavingUs
		if runFamily(f.SavingFrom) == fromCollectiveWait && slices.Contains(f.Ranks, rank) {
			saving *= idleLeft
		}
		key := runFamily(f.SavingFrom)
		pt := parts[key]
		if pt == nil {
			pt = &part{}
			parts[key] = pt
			order = append(order, key)
		}
		pt.findings = append(pt.findings, i)
		pt.savings = append(pt.savings, saving)
		pt.sum += f.SavingUs
		pt.most = max(pt.most, saving)
	}
	total := *r.rankCombined
	for _, from := range order {
		pt := parts[from]
		avail := pt.most
		switch from {
		case fromCollectiveWait:
			avail = max(avail, LedgerUs(ss.SteadyLedger, LinePeerWait))
		case fromExposedComm:
			avail = max(avail, LedgerUs(ss.SteadyLedger, LineCommunication))
		}
		left := 1.0
		for _, s := range pt.savings {
			if avail > 0 {
				left *= 1 - min(s/avail, 1)
			}
		}
		combined := min(pt.sum, avail*(1-left))
		total += combined
		if len(pt.findings) > 1 && overlapping(combined, pt.sum) {
			r.Overlaps = append(r.Overlaps, Overlap{SavingFrom: from, Findings: pt.findings, SumUs: pt.sum, AvailableUs: avail, CombinedUs: combined})
		}
	}
	slices.SortStableFunc(r.Overlaps, func(a, b Overlap) int { return cmp.Compare(a.Findings[0], b.Findings[0]) })
	if step > 0 {
		total = min(total, step-min(ss.SteadyIrreducibleUs, step))
	}
	r.Summary.CombinedSavingUs = total
	r.Summary.CombinedSavingShare = shareOf(total, step)
}

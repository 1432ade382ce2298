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
		if f.LedgerLines == nil {
			f.LedgerLines = []string{}
		}
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

// fromCollectiveWait is distributed.FromCollectiveWait: the SavingFrom
// of a late rank's finding (the others' waiting for it).
const fromCollectiveWait = "collective wait"

// combineRun sets the combined saving of a run's analysis: the rank's own
// findings' combined saving plus the cross-rank findings', each part of
// the latter combined as combineSavings does with the step as what is
// available, the total at most the step. When the described rank is
// itself late (a cross-rank finding concerns it), its own findings out of
// GPU idle time remove part of the same lateness: that finding counts
// only for what they leave, as savings out of one part do.
func (r *Result) combineRun(rank int) {
	step := r.StepStats.SteadyWallUs
	idleLeft := 1.0
	for _, f := range r.Findings {
		if !f.crossRank && step > 0 && (f.SavingFrom == FromGPUIdle || f.SavingFrom == FromHostWaits || f.SavingFrom == FromLaunchGaps) {
			idleLeft *= 1 - min(f.SavingUs/step, 1)
		}
	}
	left := map[string]float64{}
	var order []string
	for _, f := range r.Findings {
		if !f.crossRank || f.SavingFrom == FromOneOff {
			continue
		}
		saving := f.SavingUs
		if f.SavingFrom == fromCollectiveWait && slices.Contains(f.Ranks, rank) {
			saving *= idleLeft
		}
		if _, ok := left[f.SavingFrom]; !ok {
			left[f.SavingFrom] = 1
			order = append(order, f.SavingFrom)
		}
		if step > 0 {
			left[f.SavingFrom] *= 1 - min(saving/step, 1)
		}
	}
	total := *r.rankCombined
	for _, from := range order {
		total += step * (1 - left[from])
	}
	if step > 0 {
		total = min(total, step)
	}
	r.Summary.CombinedSavingUs = total
	r.Summary.CombinedSavingShare = shareOf(total, step)
}

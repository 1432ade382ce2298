package distributed

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/stats"
	"github.com/tracelens/tracelens/trace"
)

// Mixture-of-experts layers exchange tokens with all-to-all: each rank
// sends every other rank the tokens routed to its experts. When routing
// is uneven, one rank moves more bytes and its all-to-all takes longer,
// and every rank waits for it at the exchange.

// IDAllToAllImbalance is the id of the all-to-all imbalance finding.
const IDAllToAllImbalance = "alltoall-imbalance"

// FromAllToAll is what an all-to-all imbalance finding's saving comes out
// of: the all-to-all time above the ranks' median.
const FromAllToAll = "all-to-all imbalance"

// Thresholds of the all-to-all imbalance finding: the busiest rank's
// all-to-all time per step above the median rank's, over the median step
// and at least this much per step; and its bytes over the mean.
const (
	a2aShare = 0.05
	a2aMin   = 200_000 // ns
	a2aBytes = 1.2
)

// AllToAllRow is one rank's all-to-all per step: matched calls in the run,
// bytes (the larger of its input and output message), kernel time in
// microseconds, and OthersWaitUs: over the all-to-alls this rank reached
// last, the other ranks' exposed wait for it (the median over them). A
// rank routed more tokens computes its experts longer and reaches the
// next exchange late, so on real runs the imbalance shows as the others
// spinning in their all-to-all kernels, not as a longer kernel of its own.
type AllToAllRow struct {
	Rank         int     `json:"rank"`
	Calls        int     `json:"calls"`
	BytesPerStep int64   `json:"bytes_per_step"`
	TimeUs       float64 `json:"kernel_per_step_us"`
	OthersWaitUs float64 `json:"others_wait_per_step_us"`
}

// AllToAll returns a row per rank taking part in matched all-to-alls, in
// rank order; nil when the run has none.
func (run *Run) AllToAll() []AllToAllRow {
	steps := trace.Duration(run.stepCount())
	rows := make([]AllToAllRow, len(run.Ranks))
	kernel := make([]trace.Duration, len(run.Ranks))
	// caused[l][p]: rank index p's exposed wait in the all-to-alls rank
	// index l reached last.
	caused := make([][]trace.Duration, len(run.Ranks))
	for ci := range run.Collectives {
		c := &run.Collectives[ci]
		if c.Kind != AllToAll {
			continue
		}
		if l, spread := c.Last(); spread > lateSlack {
			last := c.Participants[l]
			if caused[last] == nil {
				caused[last] = make([]trace.Duration, len(run.Ranks))
			}
			for i, p := range c.Participants {
				if i != l {
					caused[last][p] += run.exposedWait(c, i)
				}
			}
		}
		for i, p := range c.Participants {
			rc := &run.Ranks[p].Collectives[c.Calls[i]]
			rows[p].Calls++
			kernel[p] += rc.Dur()
			if eb := DTypeBytes(rc.Args.DType); eb > 0 {
				rows[p].BytesPerStep += max(rc.Args.InNelems, rc.Args.OutNelems) * eb
			}
		}
	}
	var out []AllToAllRow
	for i, r := range run.Ranks {
		if rows[i].Calls == 0 {
			continue
		}
		row := rows[i]
		row.Rank = r.Rank
		row.BytesPerStep /= int64(steps)
		row.TimeUs = (kernel[i] / steps).Micros()
		if caused[i] != nil {
			others := slices.Delete(slices.Clone(caused[i]), i, i+1)
			row.OthersWaitUs = (stats.Median(others) / steps).Micros()
		}
		out = append(out, row)
	}
	return out
}

// findAllToAll reports ranks whose all-to-all moves materially more bytes
// and takes materially longer than the median rank's: routing imbalance.
// The saving is the busiest rank's time above the median per step, which
// the others wait through at every exchange.
func (run *Run) findAllToAll(rows []AllToAllRow, step trace.Duration) []Finding {
	if len(rows) < 2 {
		return nil
	}
	times := make([]float64, len(rows))
	var bytes float64
	for i, r := range rows {
		times[i] = r.TimeUs
		bytes += float64(r.BytesPerStep)
	}
	slices.Sort(times)
	med := times[len(times)/2]
	if len(times)%2 == 0 {
		med = (times[len(times)/2-1] + times[len(times)/2]) / 2
	}
	mean := bytes / float64(len(rows))
	// The rank routed the most tokens moves the most bytes; what it
	// costs is its all-to-all time above the median rank's, or, when it
	// reaches the exchanges late (its experts compute longer), the
	// others' wait for it there: whichever is larger.
	top := slices.MaxFunc(rows, func(a, b AllToAllRow) int { return cmp.Compare(a.BytesPerStep, b.BytesPerStep) })
	excess := trace.Duration((top.TimeUs - med) * 1000)
	from := FromAllToAll
	if w := trace.Duration(top.OthersWaitUs * 1000); w > excess {
		// That wait is collective wait, as a straggler's: the two
		// findings' savings overlap in the combined saving.
		excess, from = w, FromCollectiveWait
	}
	ratio := 0.0
	if mean > 0 {
		ratio = float64(top.BytesPerStep) / mean
	}
	if excess < a2aMin || step > 0 && float64(excess) < a2aShare*float64(step) || ratio < a2aBytes {
		return nil
	}
	f := Finding{Ranks: []int{top.Rank}}
	f.ID, f.Subject, f.SavingFrom = IDAllToAllImbalance, fmt.Sprintf("rank %d", top.Rank), from
	saving := capAt(excess, step)
	f.SavingUs, f.SavingNs = saving.Micros(), int64(saving)
	if step > 0 {
		f.Share = min(float64(saving)/float64(step), 1)
	}
	f.Severity, f.Confidence = analyze.Medium, analyze.Medium
	f.Title = truncate(fmt.Sprintf("All-to-all is imbalanced: rank %d moves %.1f× the mean bytes and costs the exchanges %s per step", top.Rank, ratio, excess), 100)
	f.Measures = []analyze.Measure{{Name: "bytes over the mean", Value: analyze.Rate(ratio, "×")},
		{Name: "excess all-to-all per step", Value: analyze.Dur(excess)}, {Name: "median step", Value: analyze.Dur(step)}}
	t := analyze.NewTable(analyze.Col("rank", analyze.KindName), analyze.Col("bytes per step", analyze.KindBytes), analyze.Col("all-to-all per step", analyze.KindDuration),
		analyze.Col("others wait for it per step", analyze.KindDuration))
	for _, r := range rows {
		t.Add(analyze.NameCell(fmt.Sprint(r.Rank)), analyze.Bytes(float64(r.BytesPerStep)), analyze.Dur(trace.Duration(r.TimeUs*1000)), analyze.Dur(trace.Duration(r.OthersWaitUs*1000)))
	}
	f.Evidence = []analyze.Evidence{{Text: fmt.Sprintf("per rank, the matched all-to-alls' message size, kernel time and the other ranks' exposed wait at the exchanges it reached last: rank %d %s of all-to-all per step against a median of %s, and the others wait %s per step for it",
		top.Rank, trace.Duration(top.TimeUs*1000), trace.Duration(med*1000), trace.Duration(top.OthersWaitUs*1000)), Table: t}}
	f.Fix = "Balance the experts' load: an auxiliary load-balancing loss (or loss-free bias balancing), a capacity factor that caps the tokens per expert, or placing hot experts on different ranks; check the router's token counts per expert."
	return []Finding{f}
}

package distributed

import (
	"cmp"
	"slices"

	"github.com/tracelens/tracelens/trace"
)

// RunKernel is one kernel name over every rank of a run: `top` for a run.
// RankMin and RankMax are the smallest and largest per-rank total (at
// ranks RankMinAt and RankMaxAt): a wide spread is work that is not
// balanced across ranks.
type RunKernel struct {
	Name                 string
	Count                int
	Total, Mean          trace.Duration
	Min, Max             trace.Duration
	RankMin, RankMax     trace.Duration
	RankMinAt, RankMaxAt int
	// Ranks is the number of ranks that ran it; Share is Total over all
	// kernel time of the run (0–1).
	Ranks int
	Share float64
}

// Kernels pools every rank's kernels by name, by total time descending
// (name ascending on ties), and returns the run's total kernel time.
func (run *Run) Kernels() ([]RunKernel, trace.Duration) {
	byName := map[string]int{}
	var rows []RunKernel
	var all trace.Duration
	for _, r := range run.Ranks {
		for _, k := range r.Kernels {
			i, ok := byName[k.Name]
			if !ok {
				i = len(rows)
				byName[k.Name] = i
				rows = append(rows, RunKernel{Name: k.Name, Min: k.Min, Max: k.Max, RankMin: k.Total, RankMax: k.Total, RankMinAt: r.Rank, RankMaxAt: r.Rank})
			}
			row := &rows[i]
			row.Count += k.Count
			row.Total += k.Total
			row.Min, row.Max = min(row.Min, k.Min), max(row.Max, k.Max)
			if k.Total < row.RankMin {
				row.RankMin, row.RankMinAt = k.Total, r.Rank
			}
			if k.Total > row.RankMax {
				row.RankMax, row.RankMaxAt = k.Total, r.Rank
			}
			row.Ranks++
			all += k.Total
		}
	}
	for i := range rows {
		row := &rows[i]
		row.Mean = row.Total / trace.Duration(max(row.Count, 1))
		if row.Ranks < len(run.Ranks) {
			// A rank without the kernel ran none of it.
			row.RankMin, row.RankMinAt = 0, -1
		}
		if all > 0 {
			row.Share = float64(row.Total) / float64(all)
		}
	}
	slices.SortStableFunc(rows, func(a, b RunKernel) int {
		if c := cmp.Compare(b.Total, a.Total); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return rows, all
}

package distributed

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// Run is a multi-rank training job analyzed as a whole.
type Run struct {
	// Ranks are sorted by rank number.
	Ranks []*Rank
	// WorldSize is what the traces say (distributedInfo.world_size), or
	// the number of ranks read when none says.
	WorldSize int
	// Missing lists ranks below WorldSize with no trace.
	Missing []int
	// Collectives are the collectives matched across ranks, by group and
	// sequence.
	Collectives []Collective
	// Unmatched counts, per rank, communication kernels that could not be
	// matched with the other ranks of their group.
	Unmatched []Unmatched
	// Clocks has one entry per rank: its clock offset to the reference
	// rank, estimated from collective end times.
	Clocks []ClockOffset
	// ClockCorrected is true when the offsets were large enough against
	// their residuals to be subtracted before computing skew and wait.
	ClockCorrected bool
	// Stats has one entry per rank, in Ranks order; Dimensions one per
	// parallelism dimension, by communication time.
	Stats      []RankStats
	Dimensions []DimensionStats
	// CommKernel is Options.CommKernel: the user's pattern for custom
	// communication kernels (nil: none).
	CommKernel *regexp.Regexp
	// Warnings say what was odd about the inputs (a rank read twice, a
	// world size that disagrees, ...).
	Warnings []string
	// Unreadable says, one line per file, which rank files could not be
	// read: the run is incomplete, analyzed without them (each line is
	// also the first of Warnings, which every face shows).
	Unreadable []string
}

// Unmatched is the number of a rank's communication kernels left
// unmatched in one group, and why.
type Unmatched struct {
	Rank   int
	Group  string
	Count  int
	Reason string
}

// assemble orders the ranks, checks that they are ranks of one job
// (checkOneJob, checkClocks), matches collectives and estimates clocks.
func assemble(ranks []*Rank, opt Options) (*Run, error) {
	run := &Run{CommKernel: opt.CommKernel}
	// Ranks without distributedInfo or a rank in their name take the next
	// free numbers in file order, with a warning.
	used := map[int]string{}
	for _, r := range ranks {
		if r.Rank < 0 {
			continue
		}
		if prev, dup := used[r.Rank]; dup {
			return nil, fmt.Errorf("%s: rank %d is also the rank of %s (two traces of the same rank in one run)", r.Source, r.Rank, prev)
		}
		used[r.Rank] = r.Source
	}
	next := 0
	for _, r := range ranks {
		if r.Rank >= 0 {
			continue
		}
		for used[next] != "" {
			next++
		}
		r.Rank, r.RankFrom = next, "file order"
		used[next] = r.Source
		run.Warnings = append(run.Warnings, fmt.Sprintf("%s: no distributedInfo.rank and no rank in the file name: taken as rank %d", r.Source, next))
	}
	slices.SortFunc(ranks, func(a, b *Rank) int { return a.Rank - b.Rank })
	if err := checkOneJob(ranks); err != nil {
		return nil, err
	}
	run.Ranks = ranks
	for _, r := range ranks {
		run.WorldSize = max(run.WorldSize, r.WorldSize)
	}
	if run.WorldSize == 0 {
		run.WorldSize = ranks[len(ranks)-1].Rank + 1
	}
	for i := 0; i < run.WorldSize; i++ {
		if _, ok := used[i]; !ok {
			run.Missing = append(run.Missing, i)
		}
	}
	for _, r := range ranks {
		if r.Rank >= run.WorldSize {
			run.Warnings = append(run.Warnings, fmt.Sprintf("%s: rank %d is outside world_size %d", r.Source, r.Rank, run.WorldSize))
		}
	}
	run.match()
	run.estimateClocks()
	if err := run.checkClocks(); err != nil {
		return nil, err
	}
	run.settle()
	return run, nil
}

// RankIndex returns the index in Ranks of global rank n, or -1.
func (run *Run) RankIndex(n int) int {
	i, ok := slices.BinarySearchFunc(run.Ranks, n, func(r *Rank, n int) int { return r.Rank - n })
	if !ok {
		return -1
	}
	return i
}

// Describe says in one line what the run is ("2 ranks of 2, NVIDIA H200,
// 98 collectives in 1 group").
func (run *Run) Describe() string {
	groups := map[string]bool{}
	for i := range run.Collectives {
		groups[run.Collectives[i].Group] = true
	}
	s := fmt.Sprintf("%d ranks of %d", len(run.Ranks), run.WorldSize)
	if d := run.Ranks[0].Device; d != "" {
		s += ", " + d
	}
	s += fmt.Sprintf(", %d collectives matched in %d groups", len(run.Collectives), len(groups))
	if len(run.Missing) > 0 {
		s += fmt.Sprintf(", missing ranks %s", ints(run.Missing))
	}
	return s
}

func ints(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

// stepOf returns the index of the step of r containing at, or -1.
func stepOf(steps []trace.Span, at trace.Time) int {
	i, _ := slices.BinarySearchFunc(steps, at, func(s trace.Span, t trace.Time) int { return cmpTime(s.End, t+1) })
	if i < len(steps) && steps[i].Start <= at && at < steps[i].End {
		return i
	}
	return -1
}

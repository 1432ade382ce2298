package distributed

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/tracelens/tracelens/trace"
)

// JobMismatchError says that two rank files cannot be ranks of one job:
// a field their traces both record disagrees. Merging them would invent
// clock offsets and stragglers, so Load refuses the run.
type JobMismatchError struct {
	// A and B are the two files; Field names what differs, ValueA and
	// ValueB are its values in A and B.
	A, B           string
	Field          string
	ValueA, ValueB string
	// Detail, when set, says how Field differs instead of the values.
	Detail string
}

func (e *JobMismatchError) Error() string {
	how := fmt.Sprintf("%s is %s in the first, %s in the second", e.Field, e.ValueA, e.ValueB)
	if e.Detail != "" {
		how = e.Field + " " + e.Detail
	}
	return fmt.Sprintf("%s and %s are not ranks of one job: %s; give each job's rank files on their own (one directory per job)", e.A, e.B, how)
}

// checkOneJob returns a *JobMismatchError when the ranks' own records
// contradict each other: distributedInfo.world_size, or a process group
// of the same pg_name whose pg_desc, pg_size or member ranks differ. The
// process groups a rank lists may differ between ranks of one job (a
// rank knows the subgroups it is a member of), so only a group both list
// is compared. Kineto's trace_id is no evidence: it is drawn per process,
// so every rank of one job has its own.
func checkOneJob(ranks []*Rank) error {
	var world *Rank
	type seen struct {
		g  Group
		by *Rank
	}
	groups := map[string]seen{}
	for _, r := range ranks {
		if r.WorldSize > 0 {
			if world != nil && world.WorldSize != r.WorldSize {
				return &JobMismatchError{A: world.Source, B: r.Source, Field: "distributedInfo.world_size",
					ValueA: strconv.Itoa(world.WorldSize), ValueB: strconv.Itoa(r.WorldSize)}
			}
			world = r
		}
		for _, g := range r.Groups {
			prev, ok := groups[g.Name]
			if !ok {
				groups[g.Name] = seen{g, r}
				continue
			}
			if err := sameGroup(prev.by, r, prev.g, g); err != nil {
				return err
			}
		}
	}
	return nil
}

// sameGroup compares process group g of rank b with the group of the same
// name that rank a lists (pg).
func sameGroup(a, b *Rank, pg, g Group) error {
	field := "distributedInfo.pg_config[pg_name " + strconv.Quote(g.Name) + "]."
	mismatch := func(name, va, vb string) error {
		return &JobMismatchError{A: a.Source, B: b.Source, Field: field + name, ValueA: va, ValueB: vb}
	}
	switch {
	case pg.Desc != g.Desc:
		return mismatch("pg_desc", strconv.Quote(pg.Desc), strconv.Quote(g.Desc))
	case pg.Size != g.Size:
		return mismatch("pg_size", strconv.Itoa(pg.Size), strconv.Itoa(g.Size))
	case len(pg.Ranks) > 0 && len(g.Ranks) > 0 && !slices.Equal(pg.Ranks, g.Ranks):
		return mismatch("ranks", fmt.Sprint(pg.Ranks), fmt.Sprint(g.Ranks))
	}
	return nil
}

// maxJobClockOffset is the largest wall-clock offset between two ranks of
// one job: hosts of a training job keep their clocks within seconds of
// each other (NTP), and the ranks profile the same steps, so an offset of
// ten minutes or more, well estimated from their collectives, means that
// the files were captured at different times: by two jobs.
const maxJobClockOffset = trace.Duration(10 * time.Minute)

// checkClocks returns a *JobMismatchError when a rank's clock, estimated
// from the collectives it shares with the reference rank (estimateClocks)
// and taken on the wall clock (each trace's baseTimeNanoseconds added),
// is off by maxJobClockOffset or more.
func (run *Run) checkClocks() error {
	ref := run.Ranks[0]
	for ri, c := range run.Clocks {
		r := run.Ranks[ri]
		if ri == 0 || c.Samples == 0 {
			continue
		}
		wall := c.Offset + trace.Duration(r.BaseTime-ref.BaseTime)
		if abs(wall) >= maxJobClockOffset && abs(wall) > clockTrust*c.Residual {
			apart := time.Duration(abs(wall)).Round(time.Second)
			return &JobMismatchError{A: ref.Source, B: r.Source, Field: "the wall clock",
				ValueA: "0", ValueB: apart.String(),
				Detail: fmt.Sprintf("is %s apart, aligned on %d collectives both ran (at most %s in one job: the files were captured at different times)",
					apart, c.Samples, time.Duration(maxJobClockOffset))}
		}
	}
	return nil
}

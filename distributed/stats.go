package distributed

import (
	"cmp"
	"slices"

	"github.com/tracelens/tracelens/stats"
	"github.com/tracelens/tracelens/trace"
)

// RankStats are one rank's communication figures over the whole trace.
type RankStats struct {
	Rank  int
	Steps int
	// StepMedian is the median ProfilerStep wall time (0 without steps).
	StepMedian trace.Duration
	// CommKernel is the rank's communication kernel time; Exposed the part
	// with no compute kernel on any stream; OverlapShare the rest over
	// CommKernel (0–1).
	CommKernel   trace.Duration
	Exposed      trace.Duration
	OverlapShare float64
	Compute      trace.Duration
	// Wait and Transfer split the matched collectives' kernel time: Wait
	// is time spent for later ranks to arrive, Transfer the shortest
	// duration across ranks (the data moving).
	Wait     trace.Duration
	Transfer trace.Duration
	// ExposedTransfer is exposed communication that is not waiting: what
	// better overlap could hide.
	ExposedTransfer trace.Duration
	// PeerWait is the part of Wait no compute kernel of the rank hid: its
	// GPU only spinning in a collective for a later rank, each instant
	// once (Run.PeerWaits).
	PeerWait trace.Duration
	// GPUBusy is the rank's GPU busy time (Rank.Busy) less GPUSpin, the
	// union of its peer waits that no other GPU activity of the rank hid:
	// a waiting rank's spinning NCCL kernels count as waiting, not as
	// work. GPUWindow is Rank.GPUWindow's length.
	GPUBusy   trace.Duration
	GPUSpin   trace.Duration
	GPUWindow trace.Duration
	// StartSkew and EndSkew are the mean of this rank's arrival (and
	// departure) minus the earliest rank's, over matched collectives.
	StartSkew trace.Duration
	EndSkew   trace.Duration
	// Last counts the collectives this rank arrived at last (by more
	// than lateSlack); CausedWait sums the others' waits then.
	Last       int
	CausedWait trace.Duration
	Matched    int
}

// DimensionStats are one parallelism dimension's figures, summed over
// ranks.
type DimensionStats struct {
	Dimension string
	Groups    []string
	Kinds     []string
	// Collectives counts matched collectives; Calls the kernels of all
	// ranks in the dimension.
	Collectives     int
	CommKernel      trace.Duration
	Exposed         trace.Duration
	ExposedTransfer trace.Duration
	Wait            trace.Duration
	Bytes           int64
	// Ranks is the number of ranks that took part.
	Ranks int
}

// lateSlack is how much later than the others a rank must arrive to count
// as the last one: below it, arrival order is noise.
const lateSlack = 50_000 // ns

// settle computes per-rank and per-dimension figures.
func (run *Run) settle() {
	run.Stats = make([]RankStats, len(run.Ranks))
	for i, r := range run.Ranks {
		s := &run.Stats[i]
		s.Rank, s.Steps = r.Rank, len(r.Steps)
		var walls []trace.Duration
		for _, st := range r.Steps {
			walls = append(walls, st.Dur())
		}
		s.StepMedian = stats.Median(walls)
		s.CommKernel, s.Exposed, s.Compute = r.CommKernel, r.Exposed, r.Compute
		if s.CommKernel > 0 {
			s.OverlapShare = 1 - float64(s.Exposed)/float64(s.CommKernel)
		}
	}
	dims := map[string]*DimensionStats{}
	dimRanks := map[string]map[int]bool{}
	for ci := range run.Collectives {
		c := &run.Collectives[ci]
		d := dims[c.Dimension]
		if d == nil {
			d = &DimensionStats{Dimension: c.Dimension}
			dims[c.Dimension] = d
			dimRanks[c.Dimension] = map[int]bool{}
		}
		if !slices.Contains(d.Groups, c.Group) {
			d.Groups = append(d.Groups, c.Group)
		}
		if !slices.Contains(d.Kinds, c.Kind) {
			d.Kinds = append(d.Kinds, c.Kind)
		}
		d.Collectives++
		d.Bytes += c.Bytes
		transfer := c.Transfer()
		last, spread := c.Last()
		first := minTime(c.Arrive)
		firstLeave := minTime(c.Leave)
		for i, p := range c.Participants {
			s := &run.Stats[p]
			rc := &run.Ranks[p].Collectives[c.Calls[i]]
			w := c.Wait(i)
			s.Wait += w
			s.Transfer += transfer
			et := max(rc.Exposed-w, 0)
			s.ExposedTransfer += et
			s.StartSkew += trace.Duration(c.Arrive[i] - first)
			s.EndSkew += trace.Duration(c.Leave[i] - firstLeave)
			s.Matched++
			d.CommKernel += rc.Dur()
			d.Exposed += rc.Exposed
			d.ExposedTransfer += et
			d.Wait += w
			dimRanks[c.Dimension][p] = true
			if i == last && spread > lateSlack {
				s.Last++
				for j := range c.Participants {
					s.CausedWait += c.Wait(j)
				}
			}
		}
	}
	for i := range run.Stats {
		s := &run.Stats[i]
		waits := run.PeerWaits(i)
		s.PeerWait = outside(waits, run.ownUnion(i, under))
		s.GPUSpin = outside(waits, run.ownUnion(i, active))
		s.GPUBusy = max(run.Ranks[i].Busy-s.GPUSpin, 0)
		s.GPUWindow = run.Ranks[i].GPUWindow.Dur()
		if s.Matched > 0 {
			s.StartSkew /= trace.Duration(s.Matched)
			s.EndSkew /= trace.Duration(s.Matched)
		}
	}
	for name, d := range dims {
		d.Ranks = len(dimRanks[name])
		run.Dimensions = append(run.Dimensions, *d)
	}
	slices.SortFunc(run.Dimensions, func(a, b DimensionStats) int { return cmp.Compare(b.CommKernel, a.CommKernel) })
}

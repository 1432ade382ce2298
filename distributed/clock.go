package distributed

import (
	"github.com/tracelens/tracelens/stats"
	"github.com/tracelens/tracelens/trace"
)

// ClockOffset is one rank's clock against the reference rank (the lowest
// rank): ranks leave a collective within microseconds of each other, so
// the median difference of their end times is the offset and the median
// deviation from it is how far to trust it.
type ClockOffset struct {
	Rank int
	// Offset is this rank's clock minus the reference's; Residual the
	// median absolute deviation of the per-collective differences.
	Offset   trace.Duration
	Residual trace.Duration
	// Samples is the number of collectives the estimate rests on (0: the
	// rank shares no collective with a rank of known offset).
	Samples int
}

// Offsets matter when they exceed both minClockOffset and
// clockTrust × their residual: ranks on one host share a clock yet leave a
// collective up to ~30 µs apart, steadily (the real 2-rank H200 runs), while
// ranks on different hosts can be milliseconds apart.
const (
	minClockOffset = 100_000 // ns
	clockTrust     = 3
)

// estimateClocks fills run.Clocks, walking from the reference rank to
// ranks that share collectives with a rank already placed.
func (run *Run) estimateClocks() {
	n := len(run.Ranks)
	run.Clocks = make([]ClockOffset, n)
	known := make([]bool, n)
	for i, r := range run.Ranks {
		run.Clocks[i].Rank = r.Rank
	}
	if n == 0 {
		return
	}
	known[0] = true
	for progress := true; progress; {
		progress = false
		for ri := 1; ri < n; ri++ {
			if known[ri] {
				continue
			}
			// Differences of end times against every placed rank.
			var deltas []trace.Duration
			for ci := range run.Collectives {
				c := &run.Collectives[ci]
				me := -1
				for i, p := range c.Participants {
					if p == ri {
						me = i
					}
				}
				if me < 0 {
					continue
				}
				for i, p := range c.Participants {
					if p != ri && known[p] {
						deltas = append(deltas, trace.Duration(c.Leave[me]-c.Leave[i])+run.Clocks[p].Offset)
						break
					}
				}
			}
			if len(deltas) == 0 {
				continue
			}
			run.Clocks[ri].Samples = len(deltas)
			run.Clocks[ri].Offset = stats.Median(deltas)
			run.Clocks[ri].Residual = mad(deltas)
			known[ri] = true
			progress = true
		}
	}
	for ri := range run.Clocks {
		o := run.Clocks[ri]
		if o.Samples > 0 && abs(o.Offset) >= minClockOffset && abs(o.Offset) > clockTrust*o.Residual {
			run.ClockCorrected = true
		}
	}
	if !run.ClockCorrected {
		return
	}
	for ci := range run.Collectives {
		c := &run.Collectives[ci]
		for i, p := range c.Participants {
			c.Arrive[i] -= trace.Time(run.Clocks[p].Offset)
			c.Leave[i] -= trace.Time(run.Clocks[p].Offset)
		}
	}
}

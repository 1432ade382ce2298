package distributed

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/stats"
	"github.com/tracelens/tracelens/trace"
)

// Collective is one collective call matched across the ranks of its
// process group.
type Collective struct {
	Group     string
	GroupDesc string
	// Dimension is the parallelism dimension the group's description
	// names (dp, tp, fsdp, ...; "default" for the default group).
	Dimension string
	Kind      string
	// Seq is the profiler's sequence number, or the position in the
	// group's order when the trace has none (SeqFromOrder).
	Seq          int64
	SeqFromOrder bool
	// Bytes is the message size in NCCL's convention (the larger of input
	// and output), 0 when the trace does not say.
	Bytes int64
	// Participants are indexes into Run.Ranks; Calls[i] is the kernel on
	// Participants[i] (an index into that rank's Collectives).
	Participants []int
	Calls        []int
	// Arrive and Leave are the kernel start and end per participant, on
	// the reference clock when Run.ClockCorrected.
	Arrive []trace.Time
	Leave  []trace.Time
	// Partners, for a point-to-point exchange only, are the participants
	// each one sent to or received from (indexes into Participants): a
	// send waits for its receiver, not for the whole exchange. Nil for
	// collectives, where everyone waits for the last to arrive.
	Partners [][]int
}

// Transfer is the shortest kernel duration across the participants: the
// time the data moved once everyone had arrived.
func (c *Collective) Transfer() trace.Duration {
	d := trace.Duration(-1)
	for i := range c.Arrive {
		if x := trace.Duration(c.Leave[i] - c.Arrive[i]); d < 0 || x < d {
			d = x
		}
	}
	return max(d, 0)
}

// Last returns the participant (index into Participants) that arrived
// last, and how much later than the earliest it arrived.
func (c *Collective) Last() (int, trace.Duration) {
	last, first := 0, c.Arrive[0]
	for i, a := range c.Arrive {
		if a > c.Arrive[last] {
			last = i
		}
		first = min(first, a)
	}
	return last, trace.Duration(c.Arrive[last] - first)
}

// lateArrival returns c's last participant when its lateness counts
// (Run.lateBy): it arrived more than lateSlack after the first, and c is
// not a point-to-point send/recv. A pipeline stage waiting in send/recv
// for its neighbour is the pipeline's bubble (pipeline-bubble, with the
// stages' balance), not a straggler: the stages run different layers, so
// comparing their windows explains nothing.
func (c *Collective) lateArrival() (int, bool) {
	l, spread := c.Last()
	return l, spread > lateSlack && c.Kind != SendRecv
}

// Wait is how long participant i waited: the latest arrival among those
// it exchanges data with (everyone, for a collective) minus its own.
func (c *Collective) Wait(i int) trace.Duration {
	if c.Partners != nil {
		latest := c.Arrive[i]
		for _, j := range c.Partners[i] {
			latest = max(latest, c.Arrive[j])
		}
		return trace.Duration(latest - c.Arrive[i])
	}
	l, _ := c.Last()
	return max(trace.Duration(c.Arrive[l]-c.Arrive[i]), 0)
}

// maxShift bounds the alignment search when matching by order: a rank
// whose profiler window opened a few collectives earlier or later.
const maxShift = 8

// match pairs each rank's communication kernels with the other ranks'.
func (run *Run) match() {
	// Per group, each rank's kernels in order.
	type seqs struct {
		desc  string
		kind  map[int][]int // rank index → collective indexes
		ranks []int
	}
	groups := map[string]*seqs{}
	var order []string
	for ri, r := range run.Ranks {
		for ci := range r.Collectives {
			if isP2P(&r.Collectives[ci]) {
				continue // matched by peer (matchP2P)
			}
			g := r.Collectives[ci].Group()
			s := groups[g]
			if s == nil {
				s = &seqs{desc: r.Collectives[ci].Args.GroupDesc, kind: map[int][]int{}}
				groups[g] = s
				order = append(order, g)
			}
			if _, ok := s.kind[ri]; !ok {
				s.ranks = append(s.ranks, ri)
			}
			s.kind[ri] = append(s.kind[ri], ci)
		}
	}
	slices.Sort(order)
	// Kernels without arguments in a run whose other kernels have them
	// were launched before the profiler started (the warm-up step's tail):
	// which call they belong to is unknown, so they are not guessed.
	withArgs := len(order) > 1 || len(order) == 1 && order[0] != noGroup
	for _, g := range order {
		s := groups[g]
		if g == noGroup && withArgs {
			for _, ri := range s.ranks {
				run.Unmatched = append(run.Unmatched, Unmatched{Rank: run.Ranks[ri].Rank, Group: g, Count: len(s.kind[ri]),
					Reason: "no collective arguments (launched before the profiler started)"})
			}
			continue
		}
		if len(s.ranks) < 2 {
			for _, ri := range s.ranks {
				run.Unmatched = append(run.Unmatched, Unmatched{Rank: run.Ranks[ri].Rank, Group: g, Count: len(s.kind[ri]), Reason: "no other rank's trace has this group"})
			}
			continue
		}
		if run.bySeq(g, s.ranks, s.kind) {
			continue
		}
		run.byOrder(g, s.ranks, s.kind)
	}
	run.matchP2P()
	slices.SortStableFunc(run.Collectives, func(a, b Collective) int { return cmpTime(minTime(a.Arrive), minTime(b.Arrive)) })
}

func minTime(v []trace.Time) trace.Time {
	return slices.Min(v)
}

// bySeq matches on the profiler's sequence numbers when every kernel of the
// group has one; it reports false when they are absent.
func (run *Run) bySeq(g string, ranks []int, calls map[int][]int) bool {
	for _, ri := range ranks {
		for _, ci := range calls[ri] {
			if run.Ranks[ri].Collectives[ci].Args.Seq < 0 {
				return false
			}
		}
	}
	at := map[int64]*Collective{}
	var seqOrder []int64
	for _, ri := range ranks {
		for _, ci := range calls[ri] {
			rc := &run.Ranks[ri].Collectives[ci]
			c := at[rc.Args.Seq]
			if c == nil {
				c = run.newCollective(g, rc)
				c.Seq = rc.Args.Seq
				at[rc.Args.Seq] = c
				seqOrder = append(seqOrder, rc.Args.Seq)
			}
			if slices.Contains(c.Participants, ri) {
				run.Unmatched = append(run.Unmatched, Unmatched{Rank: run.Ranks[ri].Rank, Group: g, Count: 1, Reason: fmt.Sprintf("Seq %d appears twice", rc.Args.Seq)})
				continue
			}
			c.add(ri, ci, rc)
		}
	}
	slices.Sort(seqOrder)
	for _, q := range seqOrder {
		c := at[q]
		if len(c.Participants) < 2 {
			run.Unmatched = append(run.Unmatched, Unmatched{Rank: run.Ranks[c.Participants[0]].Rank, Group: g, Count: 1, Reason: fmt.Sprintf("Seq %d on no other rank", q)})
			continue
		}
		run.Collectives = append(run.Collectives, *c)
	}
	return true
}

func (run *Run) newCollective(g string, rc *RankCollective) *Collective {
	c := &Collective{Group: g, GroupDesc: rc.Args.GroupDesc, Dimension: Dimension(rc.Args.GroupDesc, rc.Args.GroupName), Kind: rc.Kind}
	if eb := DTypeBytes(rc.Args.DType); eb > 0 {
		c.Bytes = max(rc.Args.InNelems, rc.Args.OutNelems) * eb
	}
	return c
}

func (c *Collective) add(ri, ci int, rc *RankCollective) {
	c.Participants = append(c.Participants, ri)
	c.Calls = append(c.Calls, ci)
	c.Arrive = append(c.Arrive, rc.Start)
	c.Leave = append(c.Leave, rc.End)
}

// signature is what must agree between ranks for two kernels at the same
// position to be the same collective.
func signature(rc *RankCollective) string {
	if rc.Kind == AllToAll {
		// Uneven splits: each rank sends and receives its own amount.
		return fmt.Sprintf("%s/%s", rc.Kind, strings.ToLower(rc.Args.DType))
	}
	return fmt.Sprintf("%s/%d/%d/%s", rc.Kind, rc.Args.InNelems, rc.Args.OutNelems, strings.ToLower(rc.Args.DType))
}

// byOrder matches the group's kernels position by position against the
// first rank's, after aligning each rank by the shift (a profiler window
// opened a few collectives apart) that makes most signatures agree, ties
// going to the shift whose end times agree best. Positions whose
// signatures still differ are reported, not matched.
func (run *Run) byOrder(g string, ranks []int, calls map[int][]int) {
	ref := ranks[0]
	refCalls := calls[ref]
	shift := map[int]int{}
	for _, ri := range ranks[1:] {
		shift[ri] = run.bestShift(ref, refCalls, ri, calls[ri])
	}
	matched := map[int]int{}
	for j, ci := range refCalls {
		rc := &run.Ranks[ref].Collectives[ci]
		c := run.newCollective(g, rc)
		c.Seq, c.SeqFromOrder = int64(j), true
		c.add(ref, ci, rc)
		sig := signature(rc)
		for _, ri := range ranks[1:] {
			k := j + shift[ri]
			if k < 0 || k >= len(calls[ri]) {
				continue
			}
			oc := &run.Ranks[ri].Collectives[calls[ri][k]]
			if signature(oc) != sig {
				continue
			}
			c.add(ri, calls[ri][k], oc)
			matched[ri]++
		}
		if len(c.Participants) < 2 {
			continue
		}
		matched[ref]++
		run.Collectives = append(run.Collectives, *c)
	}
	for _, ri := range ranks {
		if n := len(calls[ri]) - matched[ri]; n > 0 {
			run.Unmatched = append(run.Unmatched, Unmatched{Rank: run.Ranks[ri].Rank, Group: g, Count: n,
				Reason: "no Seq in the trace and no kernel of the same kind and size at the same position on the other ranks"})
		}
	}
}

// bestShift returns k such that kernel j on the reference rank matches
// kernel j+k on rank ri (alignShift, on collective signatures).
func (run *Run) bestShift(ref int, refCalls []int, ri int, calls []int) int {
	at := func(r, c int) *RankCollective { return &run.Ranks[r].Collectives[c] }
	return alignShift(len(refCalls), len(calls),
		func(i, j int) bool { return signature(at(ref, refCalls[i])) == signature(at(ri, calls[j])) },
		func(i, j int) trace.Duration { return trace.Duration(at(ri, calls[j]).End - at(ref, refCalls[i]).End) })
}

// alignShift returns k in [−maxShift, maxShift] such that item i of one
// list (length na) matches item i+k of the other (length nb): the shift
// where most pairs are the same call, ties going to the one whose end
// times differ most evenly (the median absolute deviation of endDelta),
// then to the smallest |k|. A rank's profiler window that opened a few
// calls earlier or later shifts its list.
func alignShift(na, nb int, same func(i, j int) bool, endDelta func(i, j int) trace.Duration) int {
	best, bestAgree, bestSpread := 0, -1, trace.Duration(-1)
	for k := -maxShift; k <= maxShift; k++ {
		agree := 0
		var deltas []trace.Duration
		for i := range na {
			j := i + k
			if j < 0 || j >= nb || !same(i, j) {
				continue
			}
			agree++
			deltas = append(deltas, endDelta(i, j))
		}
		spread := mad(deltas)
		if agree > bestAgree || agree == bestAgree && (spread < bestSpread || spread == bestSpread && abs(k) < abs(best)) {
			best, bestAgree, bestSpread = k, agree, spread
		}
	}
	return best
}

func abs[T ~int | ~int64](x T) T {
	if x < 0 {
		return -x
	}
	return x
}

// mad is the median absolute deviation from the median.
func mad(v []trace.Duration) trace.Duration {
	if len(v) == 0 {
		return 0
	}
	m := stats.Median(v)
	dev := make([]trace.Duration, len(v))
	for i, x := range v {
		dev[i] = abs(x - m)
	}
	return stats.Median(dev)
}

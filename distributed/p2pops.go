package distributed

import (
	"cmp"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// Point-to-point traffic cannot be matched by position in a process
// group: a middle pipeline stage sends to one neighbour and receives from
// the other, and torch.distributed.pipelining batches a send and a recv
// into one NCCL kernel (ncclGroupStart/End), launched inside an
// "nccl:coalesced" range that carries no arguments. What the profiler
// does record is one record_param_comms op per send or recv, with the
// peer ("Dst Rank", "Src Rank"). Each such op belongs to the next
// send/recv kernel its thread launches: NCCL launches a group's kernel at
// the group's end, after every op of it was recorded.

// P2POp is one send or recv that a point-to-point kernel carries.
type P2POp struct {
	Send bool
	// Peer is the global rank on the other side.
	Peer int
	// Bytes is the message size (the larger of input and output elements
	// times the element size), 0 when the trace does not say.
	Bytes int64
}

// attachP2P gives each send/recv kernel of r the p2p ops recorded since
// the previous such kernel's launch. A kernel
// launched before the profiler started (Launch < 0) gets none.
func attachP2P(t *trace.Trace, sc *commScanner, r *Rank) {
	type opAt struct {
		at   trace.Time
		args commArgs
	}
	if len(sc.byExtID) == 0 {
		return
	}
	var ops []opAt
	for i := range t.Ops {
		// Only record_param_comms carries a send or recv: the name test
		// spares the map lookup for the millions of other ops.
		op := &t.Ops[i]
		if op.ExternalID == 0 || op.Name != "record_param_comms" {
			continue
		}
		a, ok := sc.byExtID[op.ExternalID]
		if !ok || a.Peer < 0 || CollectiveKind(a.Collective, "") != SendRecv {
			continue
		}
		ops = append(ops, opAt{at: op.Start, args: a})
	}
	if len(ops) == 0 {
		return
	}
	slices.SortStableFunc(ops, func(a, b opAt) int { return cmp.Compare(a.at, b.at) })
	var kernels []int
	for i := range r.Collectives {
		if c := &r.Collectives[i]; c.Kind == SendRecv && c.Launch >= 0 {
			kernels = append(kernels, i)
		}
	}
	slices.SortStableFunc(kernels, func(a, b int) int { return cmp.Compare(r.Collectives[a].Launch, r.Collectives[b].Launch) })
	k := 0
	for _, o := range ops {
		for k < len(kernels) && r.Collectives[kernels[k]].Launch < o.at {
			k++
		}
		if k == len(kernels) {
			break
		}
		c := &r.Collectives[kernels[k]]
		var b int64
		if eb := DTypeBytes(o.args.DType); eb > 0 {
			b = max(o.args.InNelems, o.args.OutNelems) * eb
		}
		c.P2P = append(c.P2P, P2POp{Send: strings.Contains(strings.ToLower(o.args.Collective), "send"), Peer: o.args.Peer, Bytes: b})
		if !c.HasArgs || c.Group() == noGroup {
			// The kernel's own arguments (none, inside nccl:coalesced)
			// give way to its first op's: its group and element type.
			c.Args, c.HasArgs = o.args, true
		}
	}
}

// P2PBytes returns what a send/recv kernel sends and receives: the sums of
// its sends' and its recvs' sizes (attachP2P). Both are 0 for a kernel
// the trace names no sends or recvs of.
func (c *RankCollective) P2PBytes() (sent, received int64) {
	for _, o := range c.P2P {
		if o.Send {
			sent += o.Bytes
		} else {
			received += o.Bytes
		}
	}
	return sent, received
}

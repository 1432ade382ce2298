package distributed

import (
	"cmp"
	"slices"

	"github.com/tracelens/tracelens/trace"
)

// A send from rank a to rank b and the recv on b from a pair up in the
// order they were issued: NCCL keeps the order of one peer pair's
// messages. Each pair links the send's kernel on a with the recv's kernel
// on b; the kernels linked directly or through a batched kernel (a send
// and a recv in one ncclGroup) form one exchange, a Collective whose
// Partners say who waited for whom.

// p2pNode is one point-to-point kernel: a rank index and its index in
// that rank's Collectives.
type p2pNode struct{ rank, call int }

// p2pEnd is one send or recv of a peer pair's ordered list.
type p2pEnd struct {
	node  p2pNode
	bytes int64
}

// isP2P reports whether rc is a point-to-point kernel whose peers the
// trace names: it is matched by peer, not by position in its group.
func isP2P(rc *RankCollective) bool {
	for _, o := range rc.P2P {
		if o.Peer >= 0 {
			return true
		}
	}
	return false
}

// matchP2P pairs the point-to-point kernels of every rank by peer and
// appends one Collective per exchange; kernels left without a partner
// are reported in run.Unmatched.
func (run *Run) matchP2P() {
	type pairKey struct{ from, to int } // rank indexes
	sends, recvs := map[pairKey][]p2pEnd{}, map[pairKey][]p2pEnd{}
	var keys []pairKey
	note := func(k pairKey) {
		if _, ok := sends[k]; !ok {
			if _, ok := recvs[k]; !ok {
				keys = append(keys, k)
			}
		}
	}
	for ri, r := range run.Ranks {
		var calls []int
		for ci := range r.Collectives {
			if isP2P(&r.Collectives[ci]) {
				calls = append(calls, ci)
			}
		}
		// Issue order is launch order (a rank's p2p kernels may run on
		// several streams).
		slices.SortStableFunc(calls, func(a, b int) int { return cmp.Compare(r.Collectives[a].Launch, r.Collectives[b].Launch) })
		for _, ci := range calls {
			for _, o := range r.Collectives[ci].P2P {
				peer := run.RankIndex(o.Peer)
				if peer < 0 || peer == ri {
					continue
				}
				end := p2pEnd{node: p2pNode{ri, ci}, bytes: o.Bytes}
				if o.Send {
					k := pairKey{ri, peer}
					note(k)
					sends[k] = append(sends[k], end)
				} else {
					k := pairKey{peer, ri}
					note(k)
					recvs[k] = append(recvs[k], end)
				}
			}
		}
	}
	slices.SortFunc(keys, func(a, b pairKey) int { return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.to, b.to)) })
	g := newP2PGraph()
	for _, k := range keys {
		s, r := sends[k], recvs[k]
		shift := run.p2pShift(s, r)
		for n := range s {
			if m := n + shift; m >= 0 && m < len(r) && s[n].bytes == r[m].bytes {
				g.link(s[n].node, r[m].node)
			}
		}
	}
	run.Collectives = append(run.Collectives, g.collectives(run)...)
	run.reportUnlinked(g)
}

// p2pShift returns k such that send n of a peer pair matches recv n+k: 0
// unless one rank's profiled window holds a few more of the pair's
// messages than the other's (alignShift, on message sizes).
func (run *Run) p2pShift(s, r []p2pEnd) int {
	at := func(e p2pEnd) *RankCollective { return &run.Ranks[e.node.rank].Collectives[e.node.call] }
	return alignShift(len(s), len(r),
		func(i, j int) bool { return s[i].bytes == r[j].bytes },
		func(i, j int) trace.Duration { return trace.Duration(at(r[j]).End - at(s[i]).End) })
}

// p2pGraph links point-to-point kernels; its connected components are
// the exchanges.
type p2pGraph struct {
	parent map[p2pNode]p2pNode
	edges  map[[2]p2pNode]bool // linked kernel pairs
	order  [][2]p2pNode
}

func newP2PGraph() *p2pGraph {
	return &p2pGraph{parent: map[p2pNode]p2pNode{}, edges: map[[2]p2pNode]bool{}}
}

func (g *p2pGraph) root(n p2pNode) p2pNode {
	for {
		p, ok := g.parent[n]
		if !ok || p == n {
			return n
		}
		g.parent[n] = g.parent[p] // path halving
		n = p
	}
}

func (g *p2pGraph) link(a, b p2pNode) {
	if _, ok := g.parent[a]; !ok {
		g.parent[a] = a
	}
	if _, ok := g.parent[b]; !ok {
		g.parent[b] = b
	}
	if ra, rb := g.root(a), g.root(b); ra != rb {
		g.parent[ra] = rb
	}
	e := [2]p2pNode{a, b}
	if !g.edges[e] {
		g.order = append(g.order, e)
		g.edges[e] = true
	}
}

// collectives turns each component into a send/recv Collective, ordered
// by first arrival.
func (g *p2pGraph) collectives(run *Run) []Collective {
	comp := map[p2pNode][]p2pNode{}
	var roots []p2pNode
	for n := range g.parent {
		r := g.root(n)
		if _, ok := comp[r]; !ok {
			roots = append(roots, r)
		}
		comp[r] = append(comp[r], n)
	}
	at := func(n p2pNode) *RankCollective { return &run.Ranks[n.rank].Collectives[n.call] }
	var out []Collective
	index := map[p2pNode]int{}
	for _, r := range roots {
		nodes := comp[r]
		slices.SortFunc(nodes, func(a, b p2pNode) int { return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.call, b.call)) })
		first := at(nodes[0])
		c := run.newCollective(first.Group(), first)
		// The exchange's message size, in NCCL's convention (the larger
		// of what a call sends and receives): the largest any of its
		// kernels moves one way.
		c.Bytes = 0
		c.Partners = make([][]int, len(nodes))
		for i, n := range nodes {
			index[n] = i
			c.add(n.rank, n.call, at(n))
			sent, received := at(n).P2PBytes()
			c.Bytes = max(c.Bytes, sent, received)
		}
		out = append(out, *c)
	}
	pos := map[p2pNode]int{} // node → index into out
	for i := range out {
		for j, p := range out[i].Participants {
			pos[p2pNode{p, out[i].Calls[j]}] = i
		}
	}
	for _, e := range g.order {
		c := &out[pos[e[0]]]
		a, b := index[e[0]], index[e[1]]
		if !slices.Contains(c.Partners[a], b) {
			c.Partners[a] = append(c.Partners[a], b)
			c.Partners[b] = append(c.Partners[b], a)
		}
	}
	slices.SortStableFunc(out, func(a, b Collective) int { return cmpTime(minTime(a.Arrive), minTime(b.Arrive)) })
	for i := range out {
		out[i].Seq, out[i].SeqFromOrder = int64(i), true
	}
	return out
}

// reportUnlinked adds, per rank, the point-to-point kernels no peer's
// trace has the other side of (sent or received outside its profiled
// window).
func (run *Run) reportUnlinked(g *p2pGraph) {
	for ri, r := range run.Ranks {
		n := 0
		var group string
		for ci := range r.Collectives {
			if !isP2P(&r.Collectives[ci]) {
				continue
			}
			if _, ok := g.parent[p2pNode{ri, ci}]; !ok {
				n++
				group = r.Collectives[ci].Group()
			}
		}
		if n > 0 {
			run.Unmatched = append(run.Unmatched, Unmatched{Rank: r.Rank, Group: group, Count: n,
				Reason: "send/recv whose peer's trace has no matching recv/send (outside its profiled window)"})
		}
	}
}

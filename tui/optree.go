package tui

import (
	"cmp"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// opTree aggregates the op call tree by name path: every distinct path of
// op names (aten::linear › aten::addmm) is one node, with the kernels
// launched directly inside it as leaves. It is what profilers' tree views
// show, summed over calls and steps.
type opTree struct {
	nodes []opNode
	roots []int32
}

type opNode struct {
	name   string // sanitised
	key    string // lower-cased name, for the filter
	kernel bool   // a leaf: GPU activity launched inside the parent op
	depth  int
	parent int32
	kids   []int32
	calls  int            // op calls, or kernel launches for a leaf
	cpu    trace.Duration // wall time of the calls (ops only)
	gpu    trace.Duration // GPU time launched inside, children included
	// ops are the op calls of an op node; gpu the GPU activities of a
	// leaf (what an op's detail reads: shapes, callers, source lines).
	ops      []int32
	launches []int32
}

type nodeKey struct {
	parent int32
	name   string
	kernel bool
}

// placedOps is an op tree of ops alone, before analyze says which op
// launched each GPU activity (withGPU finishes it: each GPU activity a
// leaf under the op analyze's Attribution names, through View.Op). The
// ops need only the trace, so the UI places them beside the analysis (a
// walk of every op, 16 ms on a 500 MB trace at 2 cores).
type placedOps struct {
	b      *treeBuilder
	opNode []int32
	ops    []trace.Op // the ops placed, to check the tree's trace is the same
}

// placeOps places t's ops.
func placeOps(t *trace.Trace) *placedOps {
	b := &treeBuilder{index: map[nodeKey]int32{}}
	return &placedOps{b: b, opNode: b.addOps(t), ops: t.Ops}
}

// withGPU hangs t's GPU activities under the ops opOf says launched
// them and returns the finished tree. t must hold the ops the tree was
// made of (analyze's trace is the one read, or a shallow copy with
// derived steps: the same ops); otherwise the tree is built again from
// t. It finishes the tree: call it once.
func (o *placedOps) withGPU(t *trace.Trace, opOf func(g int) trace.Index) opTree {
	if len(o.ops) != len(t.Ops) || len(t.Ops) > 0 && &o.ops[0] != &t.Ops[0] {
		o = placeOps(t)
	}
	o.b.addGPU(t, opOf, o.opNode)
	o.b.tr.sortByTime()
	return o.b.tr
}

// treeBuilder grows an opTree: one node per name path.
type treeBuilder struct {
	tr    opTree
	index map[nodeKey]int32
}

// child is the node named name under parent (-1: a root), made if new.
func (b *treeBuilder) child(parent int32, name string, kernel bool) int32 {
	tr := &b.tr
	k := nodeKey{parent, name, kernel}
	if n, ok := b.index[k]; ok {
		return n
	}
	n := int32(len(tr.nodes))
	depth := 0
	if parent >= 0 {
		depth = tr.nodes[parent].depth + 1
	}
	clean := sanitize(name)
	tr.nodes = append(tr.nodes, opNode{name: clean, key: strings.ToLower(clean), kernel: kernel, depth: depth, parent: parent})
	if parent >= 0 {
		tr.nodes[parent].kids = append(tr.nodes[parent].kids, n)
	} else {
		tr.roots = append(tr.roots, n)
	}
	b.index[k] = n
	return n
}

// addOps places every op under its parent's node and returns each op's
// node. Ops are sorted so parents precede children: one pass places them.
func (b *treeBuilder) addOps(t *trace.Trace) []int32 {
	tr := &b.tr
	opNode := make([]int32, len(t.Ops))
	for i := range t.Ops {
		o := &t.Ops[i]
		parent := int32(-1)
		if o.Parent != trace.None {
			parent = opNode[o.Parent]
		}
		n := b.child(parent, o.Name, false)
		opNode[i] = n
		tr.nodes[n].ops = append(tr.nodes[n].ops, int32(i))
		tr.nodes[n].calls++
		tr.nodes[n].cpu += o.Dur()
	}
	return opNode
}

// addGPU hangs each GPU activity as a leaf under its op's node (or under
// "(launched outside any op)") and adds its time to every node above.
func (b *treeBuilder) addGPU(t *trace.Trace, opOf func(g int) trace.Index, opNode []int32) {
	tr := &b.tr
	noOp := int32(-1)
	for g := range t.GPU {
		a := &t.GPU[g]
		parent := int32(-1)
		if op := opOf(g); op != trace.None {
			parent = opNode[op]
		} else {
			if noOp < 0 {
				noOp = b.child(-1, "(launched outside any op)", false)
			}
			parent = noOp
		}
		name := a.Name
		if a.Kind != trace.Kernel {
			name = a.Kind.String() + " " + a.Copy.String()
			if a.Kind == trace.Memset {
				name = "memset"
			}
		}
		leaf := b.child(parent, name, true)
		tr.nodes[leaf].launches = append(tr.nodes[leaf].launches, int32(g))
		tr.nodes[leaf].calls++
		for n := leaf; n >= 0; n = tr.nodes[n].parent {
			tr.nodes[n].gpu += a.Dur()
		}
	}
	if noOp >= 0 {
		for _, k := range tr.nodes[noOp].kids {
			tr.nodes[noOp].calls += tr.nodes[k].calls
		}
	}
}

// sortByTime orders roots and every node's children by GPU time, then CPU
// time, then name.
func (tr *opTree) sortByTime() {
	byTime := func(a, b int32) int {
		na, nb := &tr.nodes[a], &tr.nodes[b]
		if c := cmp.Compare(nb.gpu, na.gpu); c != 0 {
			return c
		}
		if c := cmp.Compare(nb.cpu, na.cpu); c != 0 {
			return c
		}
		return cmp.Compare(na.name, nb.name)
	}
	slices.SortStableFunc(tr.roots, byTime)
	for i := range tr.nodes {
		slices.SortStableFunc(tr.nodes[i].kids, byTime)
	}
}

// leaves calls f for every kernel leaf under the nodes ns, each once:
// a node inside another of ns is that one's already.
func (tr *opTree) leaves(ns []int32, f func(leaf int32)) {
	in := make(map[int32]bool, len(ns))
	for _, n := range ns {
		in[n] = true
	}
	var walk func(n int32)
	walk = func(n int32) {
		if tr.nodes[n].kernel {
			f(n)
			return
		}
		for _, k := range tr.nodes[n].kids {
			walk(k)
		}
	}
	for _, n := range ns {
		nested := false
		for p := tr.nodes[n].parent; p >= 0 && !nested; p = tr.nodes[p].parent {
			nested = in[p]
		}
		if !nested {
			walk(n)
		}
	}
}

// path is node n's name path, outermost first.
func (tr *opTree) path(n int32) string {
	var names []string
	for ; n >= 0; n = tr.nodes[n].parent {
		names = append(names, tr.nodes[n].name)
	}
	slices.Reverse(names)
	return strings.Join(names, " › ")
}

// visible lists the nodes shown: with no filter, the expanded part of the
// tree; with a filter, every node whose subtree has a matching name, all
// expanded, so a search shows where the match sits.
func (tr *opTree) visible(open []bool, filter string) []int32 {
	var out []int32
	var hit []bool
	if filter != "" {
		f := filterMatcher(filter)
		hit = make([]bool, len(tr.nodes))
		// Children come after parents in nodes, so a reverse pass sees
		// every child before its parent.
		for i := len(tr.nodes) - 1; i >= 0; i-- {
			if hit[i] || f.match(tr.nodes[i].key) {
				hit[i] = true
				if p := tr.nodes[i].parent; p >= 0 {
					hit[p] = true
				}
			}
		}
	}
	var walk func(ns []int32)
	walk = func(ns []int32) {
		for _, n := range ns {
			if hit != nil && !hit[n] {
				continue
			}
			out = append(out, n)
			if hit != nil || open[n] {
				walk(tr.nodes[n].kids)
			}
		}
	}
	walk(tr.roots)
	return out
}

package analyze

import (
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// Fusion chains: which consecutive kernels fusion-candidate may fuse (and
// what breaks a chain), grouped by their sequence of kernel names.

// chainGroup is every occurrence of one sequence of kernel names.
type chainGroup struct {
	occ [][]int // GPU indexes per occurrence
	key int     // its key's position in the keys (fusionChainSet)
}

// fusionChainSet is what fusionChains finds: the chains' keys (the
// kernels' name ids) in first-seen order with each one's group (byKey),
// every occurrence in trace order (order) and the columns the chains
// were found in (cols: each fusable GPU activity's op, start, end and
// device).
type fusionChainSet struct {
	keys  []string
	byKey []*chainGroup
	order []occRef
	cols  *fusionColumns
}

// occRef is an occurrence of a chain: the chain's position in the keys
// and the occurrence's in its group.
type occRef struct{ key, i int }

// fusionChains groups the runs of fusable kernels (memory-bound, launched
// by a framework op, not compiled or the optimizer's) on one stream, in
// one step, one call of one user function and on one tensor, from at
// least FusionMinChain op calls, by their sequence of kernel names (keys
// in first-seen order).
func (p *Pass) fusionChains() (*fusionChainSet, error) {
	// A kernel can never join a chain when torch.compile ran it (compiled)
	// or when launched by an op that also runs a GEMM or attention kernel
	// (gemmOps); by AccumulateGrad, whose .grad output must persist in
	// memory, so it is no intermediate a fusion could keep in registers;
	// by a collective's own ops (FSDP's all_gather_copy_in, c10d, NCCL's
	// record_param_comms), whose buffers the communication kernel reads;
	// or when it is a foreach multi_tensor_apply kernel, which already
	// handles many tensors in one launch (fusionMarks). A run ends where
	// two consecutive kernels cannot share a chain (chainBreak).
	oc, err := p.opClasses()
	if err != nil {
		return nil, err
	}
	marks, cols := p.fusionMarks(oc)
	cs := &fusionChainSet{cols: cols}
	groups := map[string]*chainGroup{}
	// A run is consecutive GPU indexes: each occurrence is a window of
	// one slice of them all, capped so that no append writes into it.
	var gpu []int
	var key []byte
	for _, runs := range p.fusionRuns(marks) {
		for _, r := range runs {
			if gpu == nil {
				gpu = make([]int, len(marks))
				for g := range gpu {
					gpu[g] = g
				}
			}
			// Key the chain by its kernel name ids, not the (long)
			// names.
			key = key[:0]
			for g := r.lo; g < r.hi; g++ {
				id := p.ix.nameOf.at(g)
				key = append(key, byte(id), byte(id>>8), byte(id>>16), byte(id>>24))
			}
			gr := groups[string(key)] // looked up without a copy of the key
			if gr == nil {
				gr = &chainGroup{key: len(cs.keys)}
				k := string(key)
				groups[k] = gr
				cs.keys, cs.byKey = append(cs.keys, k), append(cs.byKey, gr)
			}
			cs.order = append(cs.order, occRef{gr.key, len(gr.occ)})
			gr.occ = append(gr.occ, gpu[r.lo:r.hi:r.hi])
		}
	}
	return cs, nil
}

// sameCall reports whether GPU activities a and b were launched by one
// call of one op: topk's radix select, a two-pass mean, index_put_'s sort
// launch several kernels inside one aten call; they are the op's
// implementation, which no fusion of the user's code changes.
func (ix *index) sameCall(a, b int) bool {
	op := ix.opOf(a)
	return op != trace.None && op == ix.opOf(b)
}

// opCalls counts the op calls behind a run of kernels: consecutive
// kernels of one call count once.
func (ix *index) opCalls(run []int) int {
	n := 0
	for i, g := range run {
		if i == 0 || !ix.sameCall(run[i-1], g) {
			n++
		}
	}
	return n
}

// frameworkOp reports whether an op name is an ATen op or an autograd
// node (not a user range or a Python function).
func frameworkOp(name string) bool {
	return strings.HasPrefix(name, "aten::") || strings.HasPrefix(name, "autograd::engine::evaluate_function:") ||
		strings.Contains(name, "Backward")
}

// opChain answers, for an op, whether it or one of its enclosing ops
// passes a test, testing each op once however many kernels it encloses.
// It walks the op classes' dense parents.
type opChain struct {
	parent []trace.Index
	test   func(trace.Index) bool
	memo   []int8 // 0 unknown, 1 yes, 2 no
	path   []trace.Index
}

// newOpChain returns an opChain over the ops whose parents are parent.
func newOpChain(parent []trace.Index, test func(trace.Index) bool) *opChain {
	return &opChain{parent: parent, test: test, memo: make([]int8, len(parent))}
}

// of reports whether op or an op enclosing it passes the test (false for
// none).
func (c *opChain) of(op trace.Index) bool {
	if m := c.memo[op]; m != 0 {
		return m == 1
	}
	path := c.path[:0] // one buffer for every walk
	v := false
	for cur := op; cur != trace.None; cur = c.parent[cur] {
		if m := c.memo[cur]; m != 0 {
			v = m == 1
			break
		}
		if c.test(cur) {
			v = true
			c.memo[cur] = 1
			break
		}
		path = append(path, cur)
	}
	mark := int8(2)
	if v {
		mark = 1
	}
	for _, p := range path {
		c.memo[p] = mark
	}
	c.path = path
	return v
}

// communicationOp reports whether an op belongs to a collective: FSDP's
// copy-in/copy-out, c10d's collectives and the NCCL bookkeeping op.
func communicationOp(name string) bool {
	return strings.HasPrefix(name, "fsdp::") || strings.HasPrefix(name, "c10d::") || strings.HasPrefix(name, "nccl:") ||
		strings.Contains(name, "record_param_comms") || strings.Contains(name, "FSDP::")
}

// sameTensor reports whether consecutive fusable kernels a and b may
// work on one tensor. Between two autograd nodes it requires the same
// shape of the nodes' ops' first inputs, as a backward elementwise chain
// has: a different shape means the next node works on another tensor (a
// weight's gradient cast next to an activation's GeluBackward0), which
// one kernel cannot fuse. Forward chains change shapes on purpose (randn
// of a low-rank factor, repeat_interleave, mul with the activation), so
// only backward nodes are checked; unknown shapes (no record_shapes)
// never break a chain.
//
// Whether an op's label (opLabel) names a backward node is its outermost
// op's class: the prefixes opLabel drops hold no "Backward".
func (ix *index) sameTensor(oc *OpClassFacts, a, b *fusableKernel) bool {
	t := ix.t
	if !a.backwardRoot(oc) || !b.backwardRoot(oc) {
		return true
	}
	da, db := firstDims(t.Ops[a.op].InputDims), firstDims(t.Ops[b.op].InputDims)
	return da == "" || db == "" || da == db
}

// firstDims is the first tensor's dims in an op's input-dims JSON text
// ("[[64, 2048], [2048]]" → "[64, 2048]"); empty when there is none.
func firstDims(dims string) string {
	i := strings.Index(dims, "[[")
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(dims[i+1:], ']')
	if j < 0 {
		return ""
	}
	return strings.ReplaceAll(dims[i+1:i+2+j], " ", "")
}

// opLabel names the op a user wrote for GPU activity g: the outermost op
// of its launch path, without the aten:: prefix ("repeat_interleave", not
// the copy_ it calls).
func (ix *index) opLabel(g int) string {
	op := ix.opOf(g)
	if op == trace.None {
		return ""
	}
	for ix.t.Ops[op].Parent != trace.None {
		op = ix.t.Ops[op].Parent
	}
	name := strings.TrimPrefix(ix.t.Ops[op].Name, "autograd::engine::evaluate_function: ")
	return strings.TrimPrefix(name, "aten::")
}

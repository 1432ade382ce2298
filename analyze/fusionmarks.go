package analyze

import (
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// Which GPU activities may join a fusion chain, and where consecutive
// ones must part. The launches (an API call each, 72 bytes, spread over
// megabytes) are read once, in one tight loop over the activities that
// the chains ask about, so their loads are in flight together; the tests
// then read dense columns.

// Marks of a GPU activity (fusionMarks).
const (
	// fuseOK: it may join a fusion chain.
	fuseOK uint8 = 1 << iota
	// fuseBreak: it cannot share the chain of the fusable activity
	// before it (chainBreak).
	fuseBreak
	// fuseCall: another op call than the fusable activity before it
	// launched it (not sameCall).
	fuseCall
)

// fusionMarks marks the GPU activities that may join a fusion chain (see
// fusionChains for what keeps one out) and, of those whose predecessor
// may too, the ones that cannot share its chain and the ones another op
// call launched, from the columns fusionColumns reads; the runs and the
// saving model read the columns too, never the launches again. Each
// chunk has its own memo of which ops are excluded: a shared one would
// be written from several goroutines, and an op's ancestors tested twice
// cost less than the locking.
func (p *Pass) fusionMarks(oc *OpClassFacts) (marks []uint8, cols *fusionColumns) {
	ix := p.ix
	cols = ix.fusionColumns()
	gemmOps := ix.gemmOps(oc, cols.ops)
	marks = make([]uint8, len(cols.flags))
	inChunks(len(marks), func(lo, hi int) {
		excluded := newOpChain(oc.parent, func(op trace.Index) bool {
			return gemmOps[op] || oc.has(op, opIsCompiled|opIsAccumulateGrad|opIsCommunication)
		})
		fusable := func(g int) fusableKernel {
			if cols.flags[g]&colCandidate == 0 || !ix.fusable(g, cols.ops[g], excluded) {
				return fusableKernel{g: g, op: trace.None}
			}
			return fusableKernel{g: g, op: cols.ops[g], frame: cols.frames[g]}
		}
		// The activity before the chunk is the previous chunk's: asked
		// again here, not read from there.
		prev := fusableKernel{op: trace.None}
		if lo > 0 {
			prev = fusable(lo - 1)
		}
		for g := lo; g < hi; g++ {
			cur := fusable(g)
			var m uint8
			if cur.op != trace.None {
				m = fuseOK
				if prev.op != trace.None {
					if ix.chainBreak(oc, cols, &prev, &cur) {
						m |= fuseBreak
					}
					if prev.op != cur.op {
						m |= fuseCall
					}
				}
			}
			marks[g] = m
			prev = cur
		}
	})
	return marks, cols
}

// fusionColumns is what the chains read of the GPU activities and their
// launches, in dense columns by GPU index: flags (colCandidate,
// colSameStream), the op of every GEMM and attention kernel (gemmOps) and
// memory-bound one, the latter's frame (None elsewhere), and a
// candidate's start, end and device (zero elsewhere). The activities (128 bytes
// each) and their launches (72 bytes each, spread over megabytes) are
// read once, in one loop, where the tests, the runs and the saving model
// each read them again.
type fusionColumns struct {
	flags       []uint8
	ops, frames []trace.Index
	start, end  []trace.Time
	device      []int32
}

// Flags of a GPU activity in fusionColumns.
const (
	// colCandidate: a memory-bound kernel or memset (no memcpy) that a
	// framework op launched, not through a CUDA graph: fusable unless
	// its name, phase or op keeps it out (fusable).
	colCandidate uint8 = 1 << iota
	// colSameStream: on the device and stream of the activity before
	// it.
	colSameStream
	// colLaunched: a GEMM, attention or memory-bound activity with a
	// launch, whose op (and frame) the columns hold.
	colLaunched
	// colMemoryBound: a memory-bound kernel or memset (no memcpy) with a
	// launch, whose start, end and device the columns hold.
	colMemoryBound
)

// fusionColumns reads the columns (see fusionColumns) chunk by chunk side
// by side.
func (ix *index) fusionColumns() *fusionColumns {
	t := ix.t
	// What a category asks: 1 its op (a GEMM or attention kernel), 2 its
	// op and frame (memory-bound).
	asks := make([]uint8, len(ix.catNames))
	for c, name := range ix.catNames {
		switch {
		case memoryBound(name):
			asks[c] = 2
		case name == CategoryGEMM || name == CategoryAttention:
			asks[c] = 1
		}
	}
	n := len(t.GPU)
	cols := &fusionColumns{flags: make([]uint8, n), ops: make([]trace.Index, n), frames: make([]trace.Index, n),
		start: make([]trace.Time, n), end: make([]trace.Time, n), device: make([]int32, n)}
	inChunks(n, func(lo, hi int) {
		var dev, stream int32 = -1, -1
		if lo > 0 {
			dev, stream = t.GPU[lo-1].Device, t.GPU[lo-1].Stream
		}
		// A block's activities first, then their launches: each loop
		// reads one array, its loads in flight together (the launches'
		// addresses are the activities' Launch, held in frames until
		// read).
		for b := lo; b < hi; b += columnsBlock {
			end := min(b+columnsBlock, hi)
			for g := b; g < end; g++ {
				a := &t.GPU[g]
				var f uint8
				if a.Device == dev && a.Stream == stream {
					f = colSameStream
				}
				dev, stream = a.Device, a.Stream
				ask := asks[ix.cat[g]]
				cols.ops[g], cols.frames[g] = trace.None, trace.None
				if ask != 0 && a.Launch != trace.None {
					f |= colLaunched
					cols.frames[g] = a.Launch
					if ask == 2 && a.Kind != trace.Memcpy {
						f |= colMemoryBound
						cols.start[g], cols.end[g], cols.device[g] = a.Start, a.End, a.Device
					}
				}
				cols.flags[g] = f
			}
			for g := b; g < end; g++ {
				f := cols.flags[g]
				if f&colLaunched == 0 {
					continue
				}
				c := &t.APICalls[cols.frames[g]]
				cols.ops[g], cols.frames[g] = c.Op, c.Frame
				if f&colMemoryBound != 0 && c.Op != trace.None && !strings.Contains(c.Name, "GraphLaunch") {
					cols.flags[g] = f | colCandidate
				}
			}
		}
	})
	return cols
}

// columnsBlock is how many activities fusionColumns reads before their
// launches.
const columnsBlock = 1024

// fusable reports whether candidate GPU activity g (colCandidate),
// launched by op, may join a fusion chain, with excluded answering for
// its op. The optimizer's kernels are optimizer-step's business: its fix
// is fused=True, not fusing by hand.
func (ix *index) fusable(g int, op trace.Index, excluded *opChain) bool {
	info := ix.info(g)
	return !info.compilerFused && !(ix.autotune != nil && ix.autotune[g]) && !info.foreach &&
		ix.phase[g] != optimizer && !excluded.of(op)
}

// gemmOps marks every op (aten op or autograd node) that has a GEMM or
// attention kernel among the kernels it launched, directly or through its
// children: the other kernels of such an op (autocast's weight casts
// under aten::linear, cuBLAS's workspace memset, AddmmBackward0's bias
// reduction) are the GEMM's preparation or epilogue, which amp-cast and a
// fused-epilogue GEMM address; they cannot fuse with the neighbouring
// layer's elementwise kernels into one kernel. User ranges are not marked:
// a record_function("forward") holds GEMMs and fusable chains alike.
// launchOps holds each GEMM and attention kernel's op (fusionColumns).
//
// The marks are one per op (a slice, not a map): the chains ask for
// every op above every memory-bound kernel. The walks read the op
// classes' dense parents and framework marks, not the ops, and stop at
// an op an earlier walk went through: its ancestors are walked already.
func (ix *index) gemmOps(oc *OpClassFacts, launchOps []trace.Index) []bool {
	marked := make([]bool, len(ix.t.Ops))
	walked := make([]bool, len(ix.t.Ops))
	gemm, attention := ix.categoryID(CategoryGEMM), ix.categoryID(CategoryAttention)
	for g, c := range ix.cat {
		if c := int(c); c != gemm && c != attention {
			continue
		}
		for op := launchOps[g]; op != trace.None && !walked[op]; op = oc.parent[op] {
			walked[op] = true
			marked[op] = oc.has(op, opIsFramework)
		}
	}
	return marked
}

// fusableKernel is what fusionMarks knows of a GPU activity: its index,
// its op when it is fusable (else None), its launch's frame, and, once
// asked, its user frame and whether its op's root is an autograd
// backward node (0 not asked, 1 yes, 2 no): a kernel is asked about
// with the one before it and again with the one after.
type fusableKernel struct {
	g            int
	op, frame    trace.Index
	user         trace.Index
	userKnown    bool
	rootBackward int8
}

// userFrame returns k's user frame, asked once.
func (ix *index) userFrame(k *fusableKernel) trace.Index {
	if !k.userKnown {
		k.user, k.userKnown = ix.userFrameOf(k.frame), true
	}
	return k.user
}

// backwardRoot reports whether k's op's outermost op is an autograd
// backward node, asked once.
func (k *fusableKernel) backwardRoot(oc *OpClassFacts) bool {
	if k.rootBackward == 0 {
		k.rootBackward = 2
		if oc.has(oc.root(k.op), opIsBackward) {
			k.rootBackward = 1
		}
	}
	return k.rootBackward == 1
}

// chainBreak reports whether fusable GPU activity b cannot share a chain
// with a, the fusable one before it: another device or stream, another
// step, another call of a user function, or (between backward nodes)
// another tensor. Pairwise tests suffice: a run's kernels share the step
// and the user frame with its first one exactly when each shares them
// with the one before. b is the activity right after a (its device and
// stream are colSameStream's).
func (ix *index) chainBreak(oc *OpClassFacts, cols *fusionColumns, a, b *fusableKernel) bool {
	// Kernels launched from one frame share its user frame: asked only
	// where the frames differ.
	return cols.flags[b.g]&colSameStream == 0 || ix.gpuStep[a.g] != ix.gpuStep[b.g] ||
		a.frame != b.frame && ix.userFrame(a) != ix.userFrame(b) || !ix.sameTensor(oc, a, b)
}

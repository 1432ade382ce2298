package analyze

import (
	"cmp"
	"slices"

	"github.com/tracelens/tracelens/trace"
)

// Fusion chains, side by side: which kernels may join a chain and where
// consecutive ones must part are questions about one kernel (and its
// predecessor), so fusionChains asks them chunk by chunk of the GPU
// activities, and only the grouping into runs, which is cheap, walks the
// activities in order.

// fusableKernels marks the GPU activities that may join a fusion chain
// (see fusionChains for what keeps one out) and, of those whose
// predecessor may too, the ones that cannot share its chain (chainBreak).
// Both are asked in one walk, so the ops a kernel's tests read are still
// in cache for the next one's. Each chunk has its own memo of which ops
// are excluded: a shared one would be written from several goroutines,
// and an op's ancestors tested twice cost less than the locking.
func (p *Pass) fusableKernels(oc *OpClassFacts) (ok, brk []bool) {
	t, ix := p.Trace, p.ix
	gemmOps := ix.gemmOps(oc)
	ok, brk = make([]bool, len(t.GPU)), make([]bool, len(t.GPU))
	inChunks(len(t.GPU), func(lo, hi int) {
		excluded := newOpChain(oc.parent, func(op trace.Index) bool {
			return gemmOps[op] || oc.has(op, opIsCompiled|opIsAccumulateGrad|opIsCommunication)
		})
		// The activity before the chunk is the previous chunk's: asked
		// again here, not read from there.
		prev := lo > 0 && ix.fusable(lo-1, excluded)
		for g := lo; g < hi; g++ {
			cur := ix.fusable(g, excluded)
			ok[g] = cur
			brk[g] = cur && prev && ix.chainBreak(oc, g-1, g)
			prev = cur
		}
	})
	return ok, brk
}

// fusable reports whether GPU activity g may join a fusion chain, with
// excluded answering for its op. The optimizer's kernels are
// optimizer-step's business: its fix is fused=True, not fusing by hand.
func (ix *index) fusable(g int, excluded *opChain) bool {
	t := ix.t
	if t.GPU[g].Kind == trace.Memcpy || !memoryBound(ix.category(g)) {
		return false
	}
	op := ix.opOf(g)
	if op == trace.None {
		return false
	}
	info := ix.info(g)
	return !info.compilerFused && !(ix.autotune != nil && ix.autotune[g]) && !graphLaunched(t, g) && !info.foreach &&
		ix.phase[g] != optimizer && !excluded.of(op)
}

// chainBreak reports whether fusable GPU activity b cannot share a chain
// with a, the fusable one before it: another device or stream, another
// step, another call of a user function, or (between backward nodes)
// another tensor. Pairwise tests suffice: a run's kernels share the step
// and the user frame with its first one exactly when each shares them
// with the one before.
func (ix *index) chainBreak(oc *OpClassFacts, a, b int) bool {
	ga, gb := &ix.t.GPU[a], &ix.t.GPU[b]
	return ga.Device != gb.Device || ga.Stream != gb.Stream || ix.gpuStep[a] != ix.gpuStep[b] ||
		ix.userFrameOf(ix.frameOf(a)) != ix.userFrameOf(ix.frameOf(b)) ||
		!ix.sameTensor(oc, a, b)
}

// occurrenceSavings returns the saving model's figures of every
// occurrence of the chains that recur (FusionMinRepeats), by the chain's
// position in keys, in the order of its occurrences. The occurrences are
// independent, so they are computed chunk by chunk side by side, each
// chunk with its own cache of input sizes; the caller sums them in order,
// so the sums come out bit for bit as one pass makes them.
func (p *Pass) occurrenceSavings(groups map[string]*chainGroup, keys []string, launchCost, bw float64) [][]occSaving {
	type ref struct{ key, i int }
	var all []ref
	occ := make([][][]int, len(keys))
	out := make([][]occSaving, len(keys))
	for ki, k := range keys {
		gr := groups[k]
		if len(gr.occ) < FusionMinRepeats {
			continue
		}
		occ[ki] = gr.occ
		out[ki] = make([]occSaving, len(gr.occ))
		for i := range gr.occ {
			all = append(all, ref{ki, i})
		}
	}
	// Read in trace order, not group by group: a group's occurrences are
	// spread over the whole trace, and the ops, calls and busy intervals
	// of one after another missed the cache. Each occurrence's saving is
	// its own (the sizes and the idle cursor only remember), so the
	// order they are read in changes nothing.
	slices.SortFunc(all, func(a, b ref) int { return cmp.Compare(occ[a.key][a.i][0], occ[b.key][b.i][0]) })
	inChunks(len(all), func(lo, hi int) {
		sizes := map[[2]string]int64{}
		idle := &idleCursor{b: p.ix.BusyFacts}
		var ops []trace.Index
		var dims [][2]string
		for b := lo; b < hi; b += occBatch {
			batch := all[b:min(b+occBatch, hi)]
			ops, dims = ops[:0], dims[:0]
			for _, r := range batch {
				ops, dims = p.occOps(ops, dims, occ[r.key][r.i])
			}
			k := 0
			for _, r := range batch {
				o := occ[r.key][r.i]
				out[r.key][r.i] = p.occurrenceSaving(o, ops[k:k+len(o)], dims[k:k+len(o)], sizes, idle, launchCost, bw)
				k += len(o)
			}
		}
	})
	return out
}

// occBatch is how many occurrences occurrenceSavings reads ahead.
const occBatch = 64

// occOps appends the op of each of occ's kernels to ops and its input
// dims and types to dims. It only reads, one kernel after another: the
// loads of many kernels' ops (each a cache miss, the ops spread over tens
// of megabytes) are then in flight together, where the saving model's
// work between them kept one at a time.
func (p *Pass) occOps(ops []trace.Index, dims [][2]string, occ []int) ([]trace.Index, [][2]string) {
	t, ix := p.Trace, p.ix
	for _, g := range occ {
		op := ix.opOf(g)
		ops = append(ops, op)
		var d [2]string
		if op != trace.None {
			d = [2]string{t.Ops[op].InputDims, t.Ops[op].InputTypes}
		}
		dims = append(dims, d)
	}
	return ops, dims
}

// fusionRun is a run of fusable kernels from at least FusionMinChain op
// calls: its GPU indexes and its key, the kernels' name ids.
type fusionRun struct {
	key string
	occ []int
}

// fusionRuns returns the runs of fusable kernels (ok) that no break (brk)
// parts, from at least FusionMinChain op calls, per chunk of the GPU
// activities in order: a chunk takes the runs that start in it, however
// far they reach, so the chunks are independent and run side by side.
func (p *Pass) fusionRuns(ok, brk []bool) [][]fusionRun {
	ix := p.ix
	return mapChunks(len(ok), func(lo, hi int) []fusionRun {
		var runs []fusionRun
		var key []byte
		for g := lo; g < hi; g++ {
			if !ok[g] || g > 0 && ok[g-1] && !brk[g] {
				continue // not a run's first kernel
			}
			end := g + 1
			for end < len(ok) && ok[end] && !brk[end] {
				end++
			}
			calls := 0
			for k := g; k < end; k++ {
				if k == g || !ix.sameCall(k-1, k) {
					calls++
				}
			}
			if calls < FusionMinChain {
				continue
			}
			run := make([]int, end-g)
			for i := range run {
				run[i] = g + i
			}
			// Key the chain by its kernel name ids, not the (long) names.
			key = key[:0]
			for _, k := range run {
				id := ix.nameOf.at(k)
				key = append(key, byte(id), byte(id>>8), byte(id>>16), byte(id>>24))
			}
			runs = append(runs, fusionRun{string(key), run})
		}
		return runs
	})
}

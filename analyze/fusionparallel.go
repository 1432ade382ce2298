package analyze

import "github.com/tracelens/tracelens/trace"

// Fusion chains, side by side: the runs are found chunk by chunk of the
// GPU activities' marks (fusionMarks), and the saving model's figures
// occurrence by occurrence; only the grouping into chains, which is
// cheap, walks the runs in order.

// occurrenceSavings returns the saving model's figures of every
// occurrence of the chains that recur (FusionMinRepeats), by the chain's
// position in the keys, in the order of its occurrences. The occurrences
// are independent, so they are computed chunk by chunk side by side,
// each chunk with its own cache of input sizes; the caller sums them in
// order, so the sums come out bit for bit as one pass makes them.
func (p *Pass) occurrenceSavings(cs *fusionChainSet, launchCost, bw float64) [][]occSaving {
	out := make([][]occSaving, len(cs.keys))
	for ki, gr := range cs.byKey {
		if len(gr.occ) >= FusionMinRepeats {
			out[ki] = make([]occSaving, len(gr.occ))
		}
	}
	// Read in trace order (the runs' own), not group by group: a group's
	// occurrences are spread over the whole trace, and the ops and busy
	// intervals of one after another missed the cache. Each occurrence's
	// saving is its own (the sizes and the idle cursor only remember), so
	// the order they are read in changes nothing.
	var refs []occRef
	for _, r := range cs.order {
		if out[r.key] != nil {
			refs = append(refs, r)
		}
	}
	inChunks(len(refs), func(lo, hi int) {
		var sizes sizeCache
		idle := &idleCursor{b: p.ix.BusyFacts}
		var texts [][2]string
		var inputs []int64
		for b := lo; b < hi; b += occBatch {
			batch := refs[b:min(b+occBatch, hi)]
			texts = p.inputTexts(texts[:0], cs, batch)
			inputs = inputs[:0]
			for _, tx := range texts {
				inputs = append(inputs, sizes.of(tx[0], tx[1]))
			}
			for _, r := range batch {
				out[r.key][r.i], inputs = p.occurrenceSaving(cs.byKey[r.key].occ[r.i], cs.cols, inputs, idle, launchCost, bw)
			}
		}
	})
	return out
}

// occBatch is how many occurrences occurrenceSavings reads ahead.
const occBatch = 64

// inputTexts appends to texts the input dims and types of the op of each
// kernel of batch's occurrences whose first input the saving model reads
// (occurrenceSaving: each kernel but the first that starts an op call),
// in order. It only reads, one op after another: the loads of many ops
// (each a cache miss, the ops spread over tens of megabytes) are then in
// flight together, where the saving model's work between them kept one
// at a time.
func (p *Pass) inputTexts(texts [][2]string, cs *fusionChainSet, batch []occRef) [][2]string {
	t, ops := p.Trace, cs.cols.ops
	for _, r := range batch {
		occ := cs.byKey[r.key].occ[r.i]
		for _, g := range occ[1:] {
			if op := ops[g]; op == trace.None {
				texts = append(texts, [2]string{})
			} else if ops[g-1] != op {
				texts = append(texts, [2]string{t.Ops[op].InputDims, t.Ops[op].InputTypes})
			}
		}
	}
	return texts
}

// fusionRun is a run of fusable kernels from at least FusionMinChain op
// calls: its GPU indexes [lo, hi).
type fusionRun struct{ lo, hi int }

// fusionRuns returns the runs of fusable kernels that no break parts
// (marks: fusionMarks), from at least FusionMinChain op calls, per chunk
// of the GPU activities in order: a chunk takes the runs that start in
// it, however far they reach, so the chunks are independent and run side
// by side.
func (p *Pass) fusionRuns(marks []uint8) [][]fusionRun {
	return mapChunks(len(marks), func(lo, hi int) []fusionRun {
		var runs []fusionRun
		for g := lo; g < hi; g++ {
			if m := marks[g]; m&fuseOK == 0 || g > 0 && marks[g-1]&fuseOK != 0 && m&fuseBreak == 0 {
				continue // not a run's first kernel
			}
			end, calls := g+1, 1
			for end < len(marks) && marks[end]&fuseOK != 0 && marks[end]&fuseBreak == 0 {
				if marks[end]&fuseCall != 0 {
					calls++
				}
				end++
			}
			if calls >= FusionMinChain {
				runs = append(runs, fusionRun{g, end})
			}
			g = end - 1 // no run starts inside this one
		}
		return runs
	})
}

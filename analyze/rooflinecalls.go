package analyze

import (
	"cmp"
	"slices"
	"unsafe"

	"github.com/tracelens/tracelens/trace"
)

// rooflineCall is one call of a GEMM (or attention) op that launched
// kernels: the op, their GPU time, and its longest kernel (the first of
// the longest: GPU index, duration and name).
type rooflineCall struct {
	op, kernel trace.Index
	gpu, kdur  trace.Duration
	kname      string
}

// rooflineCalls returns the launching GEMM op calls, by op. The kernels
// are read in chunks side by side, each kernel a call of its own, joined
// in chunk order (GPU order) and merged per op: the times are integer
// sums, and a call's main kernel stays the first of its longest. A
// slice, not a map by op: the calls are read in op order next, and a
// map's tens of thousands of entries were hashed, then sorted.
func (ix *index) rooflineCalls() []rooflineCall {
	t := ix.t
	isFlop := byName(&ix.host.ops, flopOp)
	// The category from its byte column first: most kernels are no GEMM
	// and are passed over without reading their 150-byte record.
	roof := make([]bool, len(ix.catNames))
	for k, c := range ix.catNames {
		roof[k] = rooflineKernel(c)
	}
	parts := mapChunks(len(t.GPU), func(lo, hi int) []rooflineCall {
		// Sized once, from the category column: grown by appends, the
		// calls left as much again in garbage.
		n := 0
		for g := lo; g < hi; g++ {
			if roof[ix.cat[g]] {
				n++
			}
		}
		calls := make([]rooflineCall, 0, n)
		for g := lo; g < hi; g++ {
			// Only the GEMM or attention kernel does the op's FLOPs:
			// under autocast an outer aten::linear also launches casts
			// and a bias add, which must not dilute its rate.
			if !roof[ix.cat[g]] || ix.autotune != nil && ix.autotune[g] {
				continue
			}
			a := &t.GPU[g]
			if a.Kind != trace.Kernel || a.Launch == trace.None {
				continue
			}
			// The innermost op around the launch that flopOp knows.
			op := ix.host.ops.firstIn(t.APICalls[a.Launch].Op, isFlop)
			if op == trace.None {
				continue
			}
			d := a.Dur()
			calls = append(calls, rooflineCall{op: op, kernel: trace.Index(g), gpu: d, kdur: d, kname: a.Name})
		}
		return calls
	})
	calls := parts[0]
	if len(parts) > 1 {
		calls = slices.Concat(parts...)
	}
	return mergeCalls(calls)
}

// mergeCalls sorts calls, one kernel each in GPU order, by op and merges
// each op's into one: its GPU time summed, its main kernel the first of
// its longest.
func mergeCalls(calls []rooflineCall) []rooflineCall {
	byOp := func(a, b rooflineCall) int { return cmp.Compare(a.op, b.op) }
	// Ops launch in their own order nearly always; stable, so an op's
	// kernels stay in GPU order.
	if !slices.IsSortedFunc(calls, byOp) {
		slices.SortStableFunc(calls, byOp)
	}
	n := 0
	for _, c := range calls {
		if n > 0 && calls[n-1].op == c.op {
			m := &calls[n-1]
			m.gpu += c.gpu
			if c.kdur > m.kdur {
				m.kernel, m.kdur, m.kname = c.kernel, c.kdur, c.kname
			}
			continue
		}
		calls[n] = c
		n++
	}
	return calls[:n]
}

// hasCall reports whether op is one of calls' (by op).
func hasCall(calls []rooflineCall, op trace.Index) bool {
	_, ok := slices.BinarySearchFunc(calls, op, func(c rooflineCall, op trace.Index) int { return cmp.Compare(c.op, op) })
	return ok
}

// opCall is what a call's row depends on: its op's name, input text and
// profiler FLOPs, and its main kernel's name. The text is interned by
// the reader, so comparing calls compares addresses.
type opCall struct {
	name, dims, types string
	flops             float64
	kname             string
}

// opCallRow is what an opCall comes to: its row (nil: the call is not
// measured) and the GEMM shape it measures.
type opCallRow struct {
	gr *rooflineGroup
	sk shapeKey
}

// addrs is an opCall by the addresses and lengths of its text: equal
// addresses are equal text, compared without a call per string.
type addrs struct {
	p     [4]*byte
	n     [4]int
	flops float64
}

// addrsOf returns c's addrs.
func addrsOf(c *opCall) addrs {
	return addrs{p: [4]*byte{unsafe.StringData(c.name), unsafe.StringData(c.dims), unsafe.StringData(c.types), unsafe.StringData(c.kname)},
		n: [4]int{len(c.name), len(c.dims), len(c.types), len(c.kname)}, flops: c.flops}
}

// opCallRows memoises the rows of the calls met: tens of thousands of
// calls repeat a few shapes (every layer, every step), and each call's
// shape, dtype and row key were worked out anew, hashing four strings
// into the rows' map. The last few are tried first, by address; the map
// (hashing the text) holds them all.
type opCallRows struct {
	recent [8]*opCallEntry
	next   int
	all    map[opCall]*opCallEntry
}

// opCallEntry is one opCall memoised (at) and its number (stepShape.call).
type opCallEntry struct {
	key opCallRow
	at  addrs
	id  int32
}

// get returns c's entry, made by resolve the first time c is met.
func (m *opCallRows) get(c *opCall, resolve func() opCallRow) *opCallEntry {
	at := addrsOf(c)
	for _, e := range m.recent {
		if e != nil && e.at == at {
			return e
		}
	}
	e := m.all[*c]
	if e == nil {
		e = &opCallEntry{key: resolve(), at: at, id: int32(len(m.all))}
		m.all[*c] = e
	}
	m.recent[m.next] = e
	m.next = (m.next + 1) % len(m.recent)
	return e
}

// stepShape is a measured call's step and its opCallEntry's number: the
// shapes measured per step, gathered only when a kernel without an op
// needs them (oplessRows).
type stepShape struct{ step, call int32 }

// opRows adds a row per (op, shape, dtype, kernel) of the GEMM op calls
// and, with steps, returns the calls' steps and shapes (stepShapes). The
// calls are taken in the trace's op order, so a row's first call (its
// Python line) and a step's last are the same on every run.
func (ix *index) opRows(calls []rooflineCall, rg *rooflineGroups, steps bool) ([]stepShape, []*opCallEntry) {
	t := ix.t
	rows := opCallRows{all: map[opCall]*opCallEntry{}}
	// A few kernel names launch every call: their dtype is string work
	// done once per name, not per call.
	kernelDTypes := map[string]string{}
	var out []stepShape
	// A block of calls' op text is read in a loop of its own first: an
	// op is 96 bytes among hundreds of thousands, a cache miss each, and
	// read in a tight loop the misses of a block overlap.
	var blk [64]opCall
	for lo := 0; lo < len(calls); lo += len(blk) {
		block := calls[lo:min(lo+len(blk), len(calls))]
		for j := range block {
			o := &t.Ops[block[j].op]
			blk[j] = opCall{o.Name, o.InputDims, o.InputTypes, o.Flops, block[j].kname}
		}
		for j := range block {
			c := &block[j]
			e := rows.get(&blk[j], func() opCallRow { return ix.opCallRow(&t.Ops[c.op], c, rg, kernelDTypes) })
			if e.key.gr == nil {
				continue
			}
			e.key.gr.row.Calls++
			e.key.gr.total += c.gpu
			if steps {
				out = append(out, stepShape{ix.gpuStep[c.kernel], e.id})
			}
		}
	}
	entries := make([]*opCallEntry, len(rows.all))
	for _, e := range rows.all {
		entries[e.id] = e
	}
	return out, entries
}

// opCallRow works out the row of call c of op o (resolved once per
// opCall): its shape and FLOPs, the dtype the kernel computes in and the
// row under that key, made with c's Python line when new (not counted:
// opRows counts every call). A call whose FLOPs or dtype are unknown
// has no row.
func (ix *index) opCallRow(o *trace.Op, c *rooflineCall, rg *rooflineGroups, kernelDTypes map[string]string) opCallRow {
	pr, src := ix.opShape(o)
	elem := elemSize(pr.DType)
	if pr.FLOPs == 0 || elem == 0 {
		return opCallRow{}
	}
	bytes := pr.Bytes
	kname := c.kname
	dt := dtypeName(pr.DType)
	kd, seen := kernelDTypes[kname]
	if !seen {
		kd = kernelDType(kname)
		kernelDTypes[kname] = kd
	}
	if kd != "" && kd != dt {
		// The kernel computes in its own dtype (autocast hands a bf16
		// GEMM fp32 inputs; TF32 runs fp32 data): its roof and its
		// operand bytes are the kernel's.
		if ke := dtypeBytes(kd); ke > 0 {
			bytes = bytes / float64(elem) * float64(ke)
		}
		dt = kd
	}
	kernel := int(c.kernel)
	gr := rg.group(rooflineKey{op: o.Name, shape: pr.Shape, dtype: dt, kernel: kname}, func() RooflineRow {
		return RooflineRow{Op: o.Name, Shape: pr.Shape, DType: dt, Kernel: kname, FLOPs: pr.FLOPs, Bytes: bytes, FLOPsSource: src,
			Python: ix.userLine(kernel)}
	})
	return opCallRow{gr: gr, sk: shapeKey{pr.Shape, dt}}
}

// shapesInStep returns, by step, the GEMM shapes measured in it, each
// the row that last measured it (steps in op order, from opRows).
func shapesInStep(steps []stepShape, entries []*opCallEntry) map[int32]map[shapeKey]*rooflineGroup {
	out := map[int32]map[shapeKey]*rooflineGroup{}
	for _, s := range steps {
		e := entries[s.call]
		if out[s.step] == nil {
			out[s.step] = map[shapeKey]*rooflineGroup{}
		}
		out[s.step][e.key.sk] = e.key.gr
	}
	return out
}

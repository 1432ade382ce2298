package analyze

import (
	"strings"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// TestFusionMarksMatchPlainTests: the marks fusionMarks reads from its
// columns are, for every GPU activity, what plain tests over the
// activities, their launches and ops say (plainFusable, plainChainBreak,
// the ops of consecutive kernels), at 1, 3 and 8 cores, on traces with
// fusion chains, backward chains, GEMM ops and collectives. It fails when
// a column is read from the wrong activity, a chunk's first activity
// loses its predecessor, or a GEMM op's ancestor goes unmarked.
func TestFusionMarksMatchPlainTests(t *testing.T) {
	for _, name := range []string{"eggroll_hooks.json.gz", "recorded/amp_mlp_foreach.json.gz", "recorded/optim_deep_narrow.json.gz",
		"runs/ddp_host_straggler/rank0.pt.trace.json.gz", "runs/multirank_fsdp/rank1.pt.trace.json.gz"} {
		tr := load(t, name)
		ix, oc := factsOf(t, tr), newOpClasses(newHostTable(tr))
		p := &Pass{Trace: tr, ix: ix}
		gemmOps := plainGEMMOps(ix, oc)
		excluded := func(op trace.Index) bool {
			for ; op != trace.None; op = oc.parent[op] {
				if gemmOps[op] || oc.has(op, opIsCompiled|opIsAccumulateGrad|opIsCommunication) {
					return true
				}
			}
			return false
		}
		want := make([]uint8, len(tr.GPU))
		seen := [3]int{}
		for g := range tr.GPU {
			if !plainFusable(ix, g, excluded) {
				continue
			}
			want[g] = fuseOK
			seen[0]++
			if g > 0 && want[g-1]&fuseOK != 0 {
				if plainChainBreak(ix, oc, g-1, g) {
					want[g] |= fuseBreak
					seen[1]++
				}
				if ix.opOf(g-1) != ix.opOf(g) {
					want[g] |= fuseCall
					seen[2]++
				}
			}
		}
		if seen[0] == 0 || seen[2] == 0 {
			t.Fatalf("%s: %d fusable kernels, %d call starts: the marks are not tested", name, seen[0], seen[2])
		}
		atCores([]int{1, 3, 8}, func(procs int) {
			marks, cols := p.fusionMarks(oc)
			for g := range tr.GPU {
				if marks[g] != want[g] {
					t.Fatalf("%s at %d cores: activity %d (%s): marks %03b, plain tests %03b", name, procs, g, tr.GPU[g].Name, marks[g], want[g])
				}
				if a := &tr.GPU[g]; marks[g]&fuseOK != 0 && (cols.ops[g] != ix.opOf(g) || cols.start[g] != a.Start || cols.end[g] != a.End || cols.device[g] != a.Device) {
					t.Fatalf("%s at %d cores: activity %d: columns op %d [%d, %d] device %d, activity's op %d [%d, %d] device %d",
						name, procs, g, cols.ops[g], cols.start[g], cols.end[g], cols.device[g], ix.opOf(g), a.Start, a.End, a.Device)
				}
			}
		})
	}
}

// The reference tests fusionMarks replaced, kept here to check it
// against.

// plainGEMMOps marks every framework op at or above a GEMM or attention
// kernel's op, walking each kernel's ops to the root.
func plainGEMMOps(ix *index, oc *OpClassFacts) []bool {
	marked := make([]bool, len(ix.t.Ops))
	for g := range ix.t.GPU {
		if c := ix.category(g); c != CategoryGEMM && c != CategoryAttention {
			continue
		}
		for op := ix.opOf(g); op != trace.None; op = oc.parent[op] {
			if oc.has(op, opIsFramework) {
				marked[op] = true
			}
		}
	}
	return marked
}

// plainFusable reports whether GPU activity g may join a fusion chain,
// with excluded answering for its op.
func plainFusable(ix *index, g int, excluded func(trace.Index) bool) bool {
	if ix.t.GPU[g].Kind == trace.Memcpy || !memoryBound(ix.category(g)) {
		return false
	}
	op := ix.opOf(g)
	if op == trace.None {
		return false
	}
	info := ix.info(g)
	return !info.compilerFused && !(ix.autotune != nil && ix.autotune[g]) && !graphLaunched(ix.t, g) && !info.foreach &&
		ix.phase[g] != optimizer && !excluded(op)
}

// plainChainBreak reports whether fusable activity b cannot share a chain
// with a, the fusable one before it.
func plainChainBreak(ix *index, oc *OpClassFacts, a, b int) bool {
	ga, gb := &ix.t.GPU[a], &ix.t.GPU[b]
	if ga.Device != gb.Device || ga.Stream != gb.Stream || ix.gpuStep[a] != ix.gpuStep[b] ||
		ix.userFrameOf(ix.frameOf(a)) != ix.userFrameOf(ix.frameOf(b)) {
		return true
	}
	oa, ob := ix.opOf(a), ix.opOf(b)
	if !oc.has(oc.root(oa), opIsBackward) || !oc.has(oc.root(ob), opIsBackward) {
		return false
	}
	da, db := firstDims(ix.t.Ops[oa].InputDims), firstDims(ix.t.Ops[ob].InputDims)
	return da != "" && db != "" && da != db
}

// TestSizeCacheMatchesFirstTensorBytes: the cache answers
// firstTensorBytes for every op's input texts of a recorded trace, asked
// twice, and for equal texts at another address (strings.Clone: the
// reader interns per worker) and empty ones.
func TestSizeCacheMatchesFirstTensorBytes(t *testing.T) {
	tr := load(t, "recorded/amp_mlp_foreach.json.gz")
	var c sizeCache
	nonzero := 0
	for round := range 2 {
		for i := range tr.Ops {
			dims, types := tr.Ops[i].InputDims, tr.Ops[i].InputTypes
			if round == 1 {
				dims, types = strings.Clone(dims), strings.Clone(types)
			}
			want := firstTensorBytes(dims, types)
			if got := c.of(dims, types); got != want {
				t.Fatalf("op %d %s %s: cache %d, firstTensorBytes %d", i, dims, types, got, want)
			}
			if want > 0 {
				nonzero++
			}
		}
	}
	if nonzero == 0 {
		t.Fatal("no op with a sized first input: the cache is not tested")
	}
	if got := c.of("", ""); got != 0 {
		t.Fatalf("empty texts: %d bytes", got)
	}
}

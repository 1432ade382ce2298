package analyze

import (
	"maps"
	"slices"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// TestRooflineCallsMatchByOp: the launching GEMM op calls read in
// chunks and merged by op (rooflineCalls) are those summed kernel by
// kernel into a map by op, at 1, 3 and 8 cores: each op's GPU time and
// main kernel (the first of its longest).
func TestRooflineCallsMatchByOp(t *testing.T) {
	atCores([]int{1, 3, 8}, func(int) {
		for _, name := range []string{"eggroll_hooks.json.gz", "triton_fused_matmul.json.gz", "recorded/transformer_sdpa.json.gz",
			"recorded/issue26/frag_kvcat.json.gz", "recorded/amp_gpt_fused.json.gz"} {
			tr := load(t, name)
			ix := factsOf(t, tr)
			want := map[trace.Index]rooflineCall{}
			isFlop := byName(&ix.host.ops, flopOp)
			for g := range tr.GPU {
				if tr.GPU[g].Kind != trace.Kernel || !rooflineKernel(ix.category(g)) || ix.autotune != nil && ix.autotune[g] {
					continue
				}
				op := ix.host.ops.firstIn(ix.opOf(g), isFlop)
				if op == trace.None {
					continue
				}
				c, ok := want[op]
				d := tr.GPU[g].Dur()
				if !ok || d > c.kdur {
					c.kernel, c.kdur, c.kname = trace.Index(g), d, tr.GPU[g].Name
				}
				c.op, c.gpu = op, c.gpu+d
				want[op] = c
			}
			got := ix.rooflineCalls()
			if len(want) == 0 {
				t.Fatalf("%s: no GEMM calls: the test would prove nothing", name)
			}
			keys := slices.Sorted(maps.Keys(want))
			if len(got) != len(keys) {
				t.Fatalf("%s: %d calls, want %d", name, len(got), len(keys))
			}
			for i, op := range keys {
				if got[i] != want[op] {
					t.Fatalf("%s: call %d: %+v, want %+v", name, i, got[i], want[op])
				}
			}
		}
	})
}

// TestMergeCallsOutOfOrder: kernels of ops met out of op order are
// merged per op, each op's time summed and its main kernel the first of
// its longest in the order given.
func TestMergeCallsOutOfOrder(t *testing.T) {
	k := func(op, g trace.Index, d trace.Duration) rooflineCall {
		return rooflineCall{op: op, kernel: g, gpu: d, kdur: d, kname: string(rune('a' + g))}
	}
	got := mergeCalls([]rooflineCall{k(7, 0, 5), k(3, 1, 2), k(7, 2, 9), k(3, 3, 4), k(7, 4, 9), k(5, 5, 1), k(3, 6, 4)})
	want := []rooflineCall{
		{op: 3, kernel: 3, gpu: 10, kdur: 4, kname: "d"},
		{op: 5, kernel: 5, gpu: 1, kdur: 1, kname: "f"},
		{op: 7, kernel: 2, gpu: 23, kdur: 9, kname: "c"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("merged %+v, want %+v", got, want)
	}
}

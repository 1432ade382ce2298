package analyze

import (
	"slices"
	"sort"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// factsOf runs every fact the metrics read over tr and returns the view
// of them.
func factsOf(t *testing.T, tr *trace.Trace) *index {
	t.Helper()
	results := map[*Analyzer]any{}
	if _, err := runGraph(tr, Facts(), nil, results, nil, nil, &stageClock{}); err != nil {
		t.Fatal(err)
	}
	return newIndex(tr, results)
}

// TestCompiledWithMatchesCompiled: the op classes' walk (compiledWith)
// answers for every GPU activity as index.compiled's walk over the ops
// does, on traces with torch.compile regions and Inductor's autotuner.
func TestCompiledWithMatchesCompiled(t *testing.T) {
	for _, name := range []string{"recorded/compile_autotune_mlp.json.gz", "nanobragg_compile.json.gz", "eggroll_hooks.json.gz"} {
		tr := load(t, name)
		ix, oc := factsOf(t, tr), newOpClasses(newHostTable(tr))
		compiled := 0
		for g := range tr.GPU {
			want := ix.compiled(g)
			if got := ix.compiledWith(oc, g); got != want {
				t.Fatalf("%s: activity %d (%s): compiledWith %v, compiled %v", name, g, tr.GPU[g].Name, got, want)
			}
			if want {
				compiled++
			}
		}
		t.Logf("%s: %d of %d activities compiled", name, compiled, len(tr.GPU))
	}
}

// TestOpAtFromMatchesOpAt: galloping from any op at or before the answer
// finds what opAt's search over all ops finds.
func TestOpAtFromMatchesOpAt(t *testing.T) {
	tr := load(t, "eggroll_hooks.json.gz")
	if len(tr.Ops) == 0 {
		t.Fatal("no ops: the test would prove nothing")
	}
	for i := 0; i < len(tr.Ops); i += 7 {
		o := &tr.Ops[i]
		for _, k := range []threadTime{{o.Thread, o.Start}, {o.Thread, o.Start + 1}, {o.Thread, o.End + 1}, {o.Thread + 1, 0}} {
			want := opAt(tr, k)
			for _, from := range []int{0, want / 2, max(want-1, 0), want} {
				if got := opAtFrom(tr, k, from); got != want {
					t.Fatalf("key %+v from %d: opAtFrom %d, opAt %d", k, from, got, want)
				}
			}
		}
	}
}

// TestIdleCursorMatchesIdleGaps: the cursor's idle time equals the total
// of idleGaps for intervals asked in time order and out of it.
func TestIdleCursorMatchesIdleGaps(t *testing.T) {
	tr := load(t, "eggroll_hooks.json.gz")
	ix := factsOf(t, tr)
	c := &idleCursor{b: ix.BusyFacts}
	check := func(dev int32, from, to trace.Time) {
		var want trace.Duration
		for _, sp := range ix.idleGaps(dev, from, to) {
			want += sp.Dur()
		}
		if got := c.idleIn(dev, from, to); got != want {
			t.Fatalf("device %d [%d, %d): cursor %d, idle gaps %d", dev, from, to, got, want)
		}
	}
	for g := 1; g < len(tr.GPU); g++ {
		a, b := &tr.GPU[g-1], &tr.GPU[g]
		check(b.Device, a.End, b.Start)
		check(b.Device, a.Start, b.End)
	}
	for g := len(tr.GPU) - 1; g > 0; g -= 3 {
		check(tr.GPU[g].Device, tr.GPU[g-1].Start, tr.GPU[g].End)
	}
}

// The reference implementations the fast variants replaced in the
// analysis, kept here to check them against.

// opAt returns the index of t's first op at or after k in the ops'
// (thread, start) order. It reads the ops in place: a search through
// slices.BinarySearchFunc copied a whole Op (96 bytes) at every probe,
// twice per hook call on a hook-heavy trace.
func opAt(t *trace.Trace, k threadTime) int {
	return sort.Search(len(t.Ops), func(i int) bool {
		o := &t.Ops[i]
		return o.Thread > k.th || o.Thread == k.th && o.Start >= k.at
	})
}

// compiled reports whether GPU activity g runs code a compiler already
// scheduled or runs for the compiler: launched inside a torch.compile
// region (Torch-Compiled Region, CompiledFunction and its backward), by
// Inductor's autotuner, or replayed from a CUDA graph. Its
// kernels are what Inductor chose not to fuse (library calls, reductions
// it splits on purpose); telling the user to fuse them with torch.compile
// would be wrong.
func (ix *index) compiled(g int) bool {
	t := ix.t
	if ix.autotune != nil && ix.autotune[g] {
		return true
	}
	if graphLaunched(t, g) {
		return true
	}
	for op := ix.opOf(g); op != trace.None; op = t.Ops[op].Parent {
		if compiledOpName(t.Ops[op].Name) {
			return true
		}
	}
	return false
}

// TestHostTableMatchesTrace: the host table's columns, bounds, thread
// runs and whether the frames come sorted are what the ops and frames themselves
// say, and the trace span built from it is Trace.Span, on fixtures with
// deep Python stacks, several threads and none.
func TestHostTableMatchesTrace(t *testing.T) {
	for _, name := range []string{"eggroll_hooks.json.gz", "recorded/dataloader_mlp.json.gz", "recorded/amp_gpt_fused.json.gz"} {
		tr := load(t, name)
		if len(tr.Ops) == 0 || len(tr.Frames) == 0 {
			t.Fatalf("%s: no ops or frames: the test would prove nothing", name)
		}
		h := newHostTable(tr)
		for i := range tr.Ops {
			o := &tr.Ops[i]
			if h.ops.start[i] != o.Start || h.ops.end[i] != o.End || h.ops.parent[i] != o.Parent {
				t.Fatalf("%s: op %d: columns %d %d %d, op %d %d %d", name, i, h.ops.start[i], h.ops.end[i], h.ops.parent[i], o.Start, o.End, o.Parent)
			}
			if r, ok := h.ops.threads[o.Thread]; !ok || i < r[0] || i >= r[1] {
				t.Fatalf("%s: op %d on thread %d outside its run %v", name, i, o.Thread, r)
			}
		}
		starts := make([]trace.Time, len(tr.Frames))
		var dispatchers, modules []int
		for i := range tr.Frames {
			starts[i] = tr.Frames[i].Start
			if h.frames.parent[i] != tr.Frames[i].Parent {
				t.Fatalf("%s: frame %d: parent column %d, frame %d", name, i, h.frames.parent[i], tr.Frames[i].Parent)
			}
			if want := hookDispatcher(&tr.Frames[i]); h.dispatchers.has(trace.Index(i)) != want {
				t.Fatalf("%s: frame %d (%s): dispatcher bit %v, hookDispatcher %v", name, i, tr.Frames[i].Name, !want, want)
			} else if want {
				dispatchers = append(dispatchers, i)
			}
			if _, ok := moduleFrame(tr.Frames[i].Name); ok {
				modules = append(modules, i)
			}
		}
		var marked []int
		h.modules.each(func(i int) { marked = append(marked, i) })
		if !slices.Equal(marked, modules) {
			t.Fatalf("%s: %d frames marked modules, %d module frames", name, len(marked), len(modules))
		}
		if name == "eggroll_hooks.json.gz" && (len(dispatchers) == 0 || len(modules) == 0) {
			t.Fatalf("%s: no hook dispatcher or module frame: the bits are not tested", name)
		}
		if h.frames.sorted != slices.IsSorted(starts) {
			t.Fatalf("%s: frames sorted %v, their starts sorted %v", name, h.frames.sorted, !h.frames.sorted)
		}
		assertFramesCounted(t, name, tr, h)
		if got, want := wholeSpan(tr, h), tr.Span(); got.Start != want.Start || got.End != want.End {
			t.Fatalf("%s: wholeSpan %v, Trace.Span %v", name, got, want)
		}
	}
	// No ops, no frames: bounds of nothing, no runs.
	h := newHostTable(&trace.Trace{})
	if h.ops.bounds.any || h.frames.bounds.any || len(h.ops.threads) != 0 {
		t.Fatalf("empty trace: table %+v", h)
	}
}

// TestOpNameColumnMatchesNames: the ops' name numbers name what the ops
// do, each distinct name once, and sameNameAbove answers what a walk up
// the ops comparing names answers, on fixtures with recursive and
// nested ops.
func TestOpNameColumnMatchesNames(t *testing.T) {
	for _, name := range []string{"eggroll_hooks.json.gz", "recorded/compile_autotune_mlp.json.gz", "recorded/amp_gpt_fused.json.gz"} {
		tr := load(t, name)
		h := newHostTable(tr)
		if len(h.ops.names) == 0 || len(slices.Compact(slices.Sorted(slices.Values(h.ops.names)))) != len(h.ops.names) {
			t.Fatalf("%s: %d names, not each once", name, len(h.ops.names))
		}
		above := 0
		for i := range tr.Ops {
			if got := h.ops.names[h.ops.name[i]]; got != tr.Ops[i].Name {
				t.Fatalf("%s: op %d: name column says %q, op %q", name, i, got, tr.Ops[i].Name)
			}
			want := sameNameAncestor(tr, trace.Index(i))
			if got := h.ops.sameNameAbove(trace.Index(i)); got != want {
				t.Fatalf("%s: op %d (%s): sameNameAbove %v, walk %v", name, i, tr.Ops[i].Name, got, want)
			}
			if want {
				above++
			}
		}
		t.Logf("%s: %d ops, %d names, %d under an op of their name", name, len(tr.Ops), len(h.ops.names), above)
	}
}

// sameNameAncestor reports whether an enclosing op has op i's name, so
// recursive calls count once in the total.
func sameNameAncestor(t *trace.Trace, i trace.Index) bool {
	name := t.Ops[i].Name
	for p := t.Ops[i].Parent; p != trace.None; p = t.Ops[p].Parent {
		if t.Ops[p].Name == name {
			return true
		}
	}
	return false
}

// TestBackwardOpsMatchWalk: the memoised walk up the parent and name
// columns (backwardOps) answers, op by op and in any order, what a walk up
// the ops testing each name with backwardOp answers.
func TestBackwardOpsMatchWalk(t *testing.T) {
	for _, name := range []string{"eggroll_hooks.json.gz", "recorded/compile_autotune_mlp.json.gz", "recorded/amp_gpt_fused.json.gz"} {
		tr := load(t, name)
		h := newHostTable(tr)
		bwd := backwardOps{ops: &h.ops, backward: byName(&h.ops, backwardOp), memo: make([]uint8, len(tr.Ops))}
		inside := 0
		for k := range tr.Ops {
			i := trace.Index((k * 7919) % len(tr.Ops)) // out of order: the memo is read before it is complete
			want := false
			for cur := i; cur != trace.None; cur = tr.Ops[cur].Parent {
				if backwardOp(tr.Ops[cur].Name) {
					want = true
					break
				}
			}
			if got := bwd.of(i); got != want {
				t.Fatalf("%s: op %d (%s): backwardOps %v, walk %v", name, i, tr.Ops[i].Name, got, want)
			}
			if want {
				inside++
			}
		}
		t.Logf("%s: %d of %d ops in backward", name, inside, len(tr.Ops))
	}
}

// TestFirstInMatchesWalk: the walk up the parent and name columns
// (firstIn) finds, from every op, the op a walk up the ops testing each
// name finds, for the name tests the analyzers ask.
func TestFirstInMatchesWalk(t *testing.T) {
	tests := []func(string) bool{flopOp, oneOf("aten::softmax", "aten::_softmax"), oneOf(sdpaMathOp), oneOf("aten::matmul", "aten::bmm", "aten::baddbmm", "aten::einsum")}
	for _, name := range []string{"eggroll_hooks.json.gz", "recorded/compile_autotune_mlp.json.gz", "recorded/amp_gpt_fused.json.gz"} {
		tr := load(t, name)
		h := newHostTable(tr)
		found := 0
		for k, test := range tests {
			in := byName(&h.ops, test)
			for i := range tr.Ops {
				want := trace.Index(trace.None)
				for cur := trace.Index(i); cur != trace.None; cur = tr.Ops[cur].Parent {
					if test(tr.Ops[cur].Name) {
						want = cur
						break
					}
				}
				if got := h.ops.firstIn(trace.Index(i), in); got != want {
					t.Fatalf("%s: test %d, op %d (%s): firstIn %d, walk %d", name, k, i, tr.Ops[i].Name, got, want)
				}
				if want != trace.None {
					found++
				}
			}
		}
		t.Logf("%s: %d ops found under a tested name", name, found)
	}
}

// TestAutotuneLaunchesSameEitherWay: the exported AutotuneLaunches (top's
// kernel table: a memo of names per chunk, no HostTable) and the
// analysis's autotuneLaunches over the HostTable's name column mark the
// same GPU activities, on traces with and without the autotuner.
func TestAutotuneLaunchesSameEitherWay(t *testing.T) {
	marked := 0
	for _, name := range []string{"eggroll_hooks.json.gz", "recorded/compile_autotune_mlp.json.gz", "recorded/compile_autotune_gemm.json.gz", "recorded/sincos_compile_cold.json.gz"} {
		tr := load(t, name)
		direct, viaTable := AutotuneLaunches(tr), autotuneLaunches(tr, newHostTable(tr))
		if !slices.Equal(direct, viaTable) {
			t.Errorf("%s: AutotuneLaunches and autotuneLaunches over the HostTable differ (%d and %d activities)", name, len(direct), len(viaTable))
		}
		for _, m := range direct {
			if m {
				marked++
			}
		}
	}
	if marked == 0 {
		t.Error("no activity marked autotune on the autotune traces: the test compares nothing")
	}
}

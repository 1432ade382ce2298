package analyze

import (
	"slices"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// TestWalkDispatchedMatchesFrames: the walk's hooks and each
// dispatcher's callee time (by its rank) are what a plain pass over the
// frames finds, at 1, 3 and 8 cores (fails when a chunk's callee sums
// are dropped or a rank names another dispatcher).
func TestWalkDispatchedMatchesFrames(t *testing.T) {
	for _, name := range []string{"eggroll_hooks.json.gz", "recorded/dataloader_mlp.json.gz", "recorded/amp_gpt_fused.json.gz"} {
		tr := load(t, name)
		h := newHostTable(tr)
		callee := map[trace.Index]trace.Duration{}
		var hooks []hookCall
		for i := range tr.Frames {
			f := &tr.Frames[i]
			if f.Parent == trace.None || !hookDispatcher(&tr.Frames[f.Parent]) {
				continue
			}
			callee[f.Parent] += f.Dur()
			if key := hookKey(f); key != "" {
				hooks = append(hooks, hookCall{frame: trace.Index(i), parent: f.Parent, thread: f.Thread, start: f.Start, end: f.End, key: key})
			}
		}
		if name == "eggroll_hooks.json.gz" && (len(hooks) == 0 || len(callee) == 0) {
			t.Fatalf("%s: no hook or dispatcher callee: the walk is not tested", name)
		}
		atCores([]int{1, 3, 8}, func(procs int) {
			d := walkDispatched(tr, h)
			if !slices.Equal(d.hooks, hooks) {
				t.Fatalf("%s at %d cores: %d hooks, the frames hold %d", name, procs, len(d.hooks), len(hooks))
			}
			n := 0
			for i := range tr.Frames {
				if !hookDispatcher(&tr.Frames[i]) {
					continue
				}
				n++
				if got, want := d.callee[d.rank.of(trace.Index(i))], callee[trace.Index(i)]; got != want {
					t.Fatalf("%s at %d cores: dispatcher %d: callee time %d, frames %d", name, procs, i, got, want)
				}
			}
			if n != len(d.callee) {
				t.Fatalf("%s at %d cores: %d callee sums for %d dispatchers", name, procs, len(d.callee), n)
			}
		})
	}
}

// TestHookCursorsMatchScans: the cursors' top-level op time and GPU busy
// time of a frame are a plain scan's over the ops and BusyFacts.busyIn's,
// for frames asked in order and out of it.
func TestHookCursorsMatchScans(t *testing.T) {
	tr := load(t, "eggroll_hooks.json.gz")
	ix := factsOf(t, tr)
	h := newHostTable(tr)
	ops, busy := opsCursor{cols: &h.ops}, busyCursor{b: ix.BusyFacts}
	check := func(f *trace.PyFrame) {
		var want trace.Duration
		for i := range tr.Ops {
			if op := &tr.Ops[i]; op.Thread == f.Thread && op.Parent == trace.None && op.Start >= f.Start && op.Start <= f.End {
				want += op.Dur()
			}
		}
		if got := ops.topIn(f.Thread, f.Start, f.End); got != want {
			t.Fatalf("frame %s: ops cursor %d, scan %d", f.Name, got, want)
		}
		if got, want := busy.busyIn(f.Start, f.End), ix.busyIn(f.Start, f.End); got != want {
			t.Fatalf("frame %s: busy cursor %d, busyIn %d", f.Name, got, want)
		}
	}
	for i := 0; i < len(tr.Frames); i += 3 {
		check(&tr.Frames[i])
	}
	for i := len(tr.Frames) - 1; i >= 0; i -= 37 {
		check(&tr.Frames[i])
	}
	// A thread without ops, asked after one with.
	check(&trace.PyFrame{Span: trace.Span{Name: "none", Start: tr.Frames[0].Start, End: tr.Frames[0].End}, Thread: trace.Index(len(tr.Threads) + 5)})
	check(&tr.Frames[len(tr.Frames)/2])
}

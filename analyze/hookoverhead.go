package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// HookMinShare is the smallest hook overhead, as a share of the median
// step, that hook-overhead reports.
const HookMinShare = 0.02

// HookOverhead measures the CPU cost of Python nn.Module hooks.
var HookOverhead = &Analyzer{
	Name: "hook-overhead",
	Doc: fmt.Sprintf("Finds Python functions that torch.nn.Module's hook dispatch calls (children of module.py's _call_impl/inner that are not "+
		"the module's forward and not library code: the user's forward hooks, pre-hooks and backward-hook wrappers) and measures their CPU time, the part of it not spent "+
		"inside framework ops (pure Python overhead), the dispatch overhead of inner() itself, and the GPU idle time while they run. "+
		"Needs Python stacks (with_stack=True). Saving model: hook Python overhead plus dispatch overhead per step, bounded by the GPU "+
		"idle time during the hooked calls (CPU time the GPU does not wait for costs nothing). Reported when at least %.0f%% of the median step.",
		HookMinShare*100),
	Requires: []*Analyzer{IdleGaps, HostTable},
	Run:      runHookOverhead,
}

// hookDispatcher reports whether a frame is torch.nn.Module's call path
// that runs hooks.
func hookDispatcher(f *trace.PyFrame) bool {
	// The function name ends the frame's name: a suffix test rules out
	// nearly every frame of a deep stack (millions) before parsing.
	if !strings.HasSuffix(f.Name, "inner") && !strings.HasSuffix(f.Name, "_call_impl") {
		return false
	}
	file, _, fn, ok := f.Source()
	return ok && strings.HasSuffix(file, "torch/nn/modules/module.py") && (fn == "inner" || fn == "_call_impl")
}

type hookStat struct {
	name                       string
	calls                      int
	cpu, inOps, overhead, idle trace.Duration
}

// hookStats measures the functions module.py's hook dispatch calls, by
// function (in first-seen order), and the dispatch's own time over the
// hooked calls (the inner() frames that ran hooks).
func (ix *index) hookStats() (stats map[string]*hookStat, order []string, dispatch trace.Duration, hooked []trace.Span) {
	t := ix.t
	// The frames a dispatcher called: a deep stack has millions of frames
	// and few dispatchers.
	children := dispatchedFrames(ix.host)
	hooks, keys := hookFrames(t, children)
	inOps, idle := ix.hookTimes(hooks)
	stats = map[string]*hookStat{}
	// The dispatchers that ran hooks, once per run of their hooks (their
	// own time is summed once their callees' time is known).
	var dispatchers []trace.Index
	for j, i := range hooks {
		f := &t.Frames[i]
		st := stats[keys[j]]
		if st == nil {
			st = &hookStat{name: keys[j]}
			stats[keys[j]] = st
			order = append(order, keys[j])
		}
		st.calls++
		st.cpu += f.Dur()
		st.inOps += inOps[j]
		st.overhead += max(f.Dur()-inOps[j], 0)
		st.idle += idle[j]
		if pf := &t.Frames[f.Parent]; len(hooked) == 0 || hooked[len(hooked)-1] != pf.Span {
			hooked = append(hooked, pf.Span)
			dispatchers = append(dispatchers, f.Parent)
		}
	}
	// inner()'s own time: dispatching hooks, building results.
	childDur := calleeTime(t, ix.host.frames.parent, children, dispatchers)
	for _, par := range dispatchers {
		dispatch += max(t.Frames[par].Dur()-childDur[par], 0)
	}
	return stats, order, dispatch, hooked
}

// hookFrames returns the frames of children that are hooks (hookKey: not
// the module's forward, not library code), in order, with their keys,
// chunk by chunk side by side. The same hooks run every call: each chunk
// parses a frame name once.
func hookFrames(t *trace.Trace, children []int) (hooks []int, keys []string) {
	type found struct {
		hooks []int
		keys  []string
	}
	for _, f := range mapChunks(len(children), func(lo, hi int) found {
		var names nameCache[string]
		var out found
		for _, i := range children[lo:hi] {
			if key := names.get(t.Frames[i].Name, hookKeyName); key != "" {
				out.hooks, out.keys = append(out.hooks, i), append(out.keys, key)
			}
		}
		return out
	}) {
		hooks, keys = append(hooks, f.hooks...), append(keys, f.keys...)
	}
	return hooks, keys
}

// hookTimes returns, for each hook frame, the time of the top-level ops
// it ran and the GPU idle time while it ran: questions about one frame
// each, asked chunk by chunk side by side.
func (ix *index) hookTimes(hooks []int) (inOps, idle []trace.Duration) {
	t := ix.t
	inOps, idle = make([]trace.Duration, len(hooks)), make([]trace.Duration, len(hooks))
	if len(hooks) == 0 {
		return inOps, idle
	}
	ot := topOpTimes(&ix.host.ops)
	inChunks(len(hooks), func(lo, hi int) {
		ops := newTopOps(ot)
		for j := lo; j < hi; j++ {
			f := &t.Frames[hooks[j]]
			inOps[j] = ops.in(f.Thread, f.Start, f.End)
			idle[j] = f.Dur() - ix.busyIn(f.Start, f.End)
		}
	})
	return inOps, idle
}

// calleeTime returns the time of the frames each of dispatchers called,
// of the frames in children (every dispatcher's callees): only the
// dispatchers that ran hooks are asked for, a few of the many, marked in
// a bit per frame so that the other callees cost a bit test. Each chunk
// of children sums its own by the dispatcher's dense id (integer sums:
// exact in any order). The parents are read from the parent column
// (parents), and a frame itself only when its dispatcher was asked for.
func calleeTime(t *trace.Trace, parents []trace.Index, children []int, dispatchers []trace.Index) map[trace.Index]trace.Duration {
	id := make(map[trace.Index]int, len(dispatchers))
	asked := make([]uint64, (len(t.Frames)+63)/64)
	for _, par := range dispatchers {
		if _, ok := id[par]; !ok {
			id[par] = len(id)
			asked[par/64] |= 1 << (par % 64)
		}
	}
	childDur := make(map[trace.Index]trace.Duration, len(id))
	if len(id) == 0 {
		return childDur
	}
	parts := mapChunks(len(children), func(lo, hi int) []trace.Duration {
		part := make([]trace.Duration, len(id))
		for _, i := range children[lo:hi] {
			if par := parents[i]; asked[par/64]&(1<<(par%64)) != 0 {
				part[id[par]] += t.Frames[i].Dur()
			}
		}
		return part
	})
	for par, k := range id {
		var d trace.Duration
		for _, part := range parts {
			d += part[k]
		}
		childDur[par] = d
	}
	return childDur
}

// hookKey names the hook frame f is ("fn() at file:line"), or "" when it
// is the module's forward or a library callee (torch.compiler.is_compiling,
// ...): part of the dispatch, not a hook the user registered.
func hookKey(f *trace.PyFrame) string {
	file, line, fn, ok := f.Source()
	if !ok || fn == "forward" || libraryFile(file) {
		return ""
	}
	return fmt.Sprintf("%s() at %s:%d", fn, file, line)
}

// dispatchedFrames returns the frames a hook dispatcher called, in order,
// walking the HostTable's frame parent column and dispatcher bits in
// chunks side by side (millions of frames in a deep stack).
func dispatchedFrames(host *hostTable) []int {
	parents := host.frames.parent
	chunks := mapChunks(len(parents), func(lo, hi int) []int {
		var found []int
		for i, par := range parents[lo:hi] {
			if par != trace.None && host.dispatchers.has(par) {
				found = append(found, lo+i)
			}
		}
		return found
	})
	if len(chunks) == 1 {
		return chunks[0] // one core: nothing to join, nothing to copy
	}
	var children []int
	for _, found := range chunks {
		children = append(children, found...)
	}
	return children
}

func runHookOverhead(p *Pass) ([]Finding, error) {
	if len(p.Trace.Frames) == 0 {
		return nil, nil
	}
	stats, order, dispatch, hooked := p.ix.hookStats()
	if len(order) == 0 {
		return nil, nil
	}
	var cpu, overhead, idle trace.Duration
	tb := NewTable(Col("hook", KindSource), Col("calls", KindCount), Col("CPU", KindDuration), Col("in ops", KindDuration), Col("Python overhead", KindDuration), Col("GPU idle meanwhile", KindDuration))
	slices.SortFunc(order, func(a, b string) int { return cmp.Compare(stats[b].cpu, stats[a].cpu) })
	for _, k := range order {
		st := stats[k]
		cpu += st.cpu
		overhead += st.overhead
		idle += st.idle
		tb.Add(SourceCell(st.name), Count(float64(st.calls)), Dur(st.cpu), Dur(st.inOps), Dur(st.overhead), Dur(st.idle))
	}
	steps := float64(max(p.Result.StepStats.Count, 1))
	saving := min(us(overhead+dispatch), us(idle)) / steps
	if saving < HookMinShare*p.Result.StepStats.MedianWallUsNoFirst {
		return nil, nil
	}
	share := p.shareOfStep(saving)
	sev := Medium
	if share >= 0.1 {
		sev = High
	}
	names := slices.Clone(order)
	return []Finding{{
		Title: fmt.Sprintf("module hooks take %s of CPU over %d calls (%s per step); GPU idle %s meanwhile",
			cpu, sumCalls(stats), fmtUs(us(cpu)/steps), idle),
		Subject:    "module hooks",
		Severity:   sev,
		SavingUs:   saving,
		SavingFrom: FromGPUIdle,
		Measures: []Measure{
			{"hook CPU time", Dur(cpu)},
			{"hook calls", Count(float64(sumCalls(stats)))},
			{"Python overhead", Dur(overhead)},
			{"dispatch overhead", Dur(dispatch)},
			{"GPU idle while hooks run", Dur(idle)},
		},
		Evidence: []Evidence{
			{Text: "hook functions called by torch.nn.Module's hook dispatch (module.py _call_impl/inner):", Table: tb},
			{Text: fmt.Sprintf("hook dispatch itself (inner() minus its callees): %s over %d hooked calls", dispatch, len(hooked))},
			{Text: "saving model: hook Python overhead + dispatch overhead per step, bounded by the GPU idle time while hooks run; the ops the hooks launch still have to run"},
		},
		Fix: fmt.Sprintf("do the hooks' work inside the module's forward instead of register_forward_hook (%s): call it directly where the "+
			"output is produced, or register the hooks only for the steps that need them and remove() them afterwards; torch.compile also traces through hooks",
			strings.Join(names, ", ")),
		Confidence: High,
	}}, nil
}

func sumCalls(m map[string]*hookStat) int {
	n := 0
	for _, s := range m {
		n += s.calls
	}
	return n
}

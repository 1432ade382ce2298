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
	d := walkDispatched(t, ix.host)
	inOps, idle := ix.hookTimes(d.hooks)
	parents := parentSpans(t, d.hooks)
	stats = map[string]*hookStat{}
	// The dispatchers that ran hooks, once per run of their hooks (their
	// own time is summed once their callees' time is known): at most one
	// a hook.
	dispatchers := make([]trace.Index, 0, len(d.hooks))
	hooked = make([]trace.Span, 0, len(d.hooks))
	var st *hookStat
	for j := range d.hooks {
		h := &d.hooks[j]
		// A dispatcher's hooks are the same few functions: the last
		// one's stat answers most calls without hashing the key.
		if st == nil || st.name != h.key {
			st = stats[h.key]
			if st == nil {
				st = &hookStat{name: h.key}
				stats[h.key] = st
				order = append(order, h.key)
			}
		}
		dur := trace.Duration(h.end - h.start)
		st.calls++
		st.cpu += dur
		st.inOps += inOps[j]
		st.overhead += max(dur-inOps[j], 0)
		st.idle += idle[j]
		if ps := parents[j]; len(hooked) == 0 || hooked[len(hooked)-1] != ps {
			hooked = append(hooked, ps)
			dispatchers = append(dispatchers, h.parent)
		}
	}
	// inner()'s own time: dispatching hooks, building results.
	for k, par := range dispatchers {
		dispatch += max(hooked[k].Dur()-d.callee[d.rank.of(par)], 0)
	}
	return stats, order, dispatch, hooked
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

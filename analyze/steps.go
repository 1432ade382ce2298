package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// Where a trace's steps come from (Summary.StepSource).
const (
	StepSourceProfiler = "ProfilerStep"
	StepSourceRange    = "record_function"
	StepSourceCall     = "python call"
	StepSourceJit      = "jit call"
	StepSourceTrace    = "whole trace"
)

// MinDerivedSteps is how many repetitions of a top-level range or
// function call make them the trace's steps when it marks no
// ProfilerStep.
const MinDerivedSteps = 2

// deriveSteps returns t itself when it has step markers, else, when the
// host repeats one unit of work, a shallow copy whose Steps are those
// repetitions, and says where the steps came from. Without ProfilerStep
// an eager simulation or benchmark called a few times is still a loop:
// the outermost repeated iteration of the main thread's top-level
// record_function ranges (findLoop: block block block block loss,
// repeated, is one iteration of five ranges, not four steps of "block"),
// else of the calls of user Python functions, else (JAX, whose profiler
// records no Python calls by default) of the calls of jitted functions,
// are its iterations, so the first call (CUDA context, cuBLAS handles,
// allocator growth) can be told from the steady state. Each iteration
// runs from its first element's start to the next one's: steps never
// overlap.
func deriveSteps(t *trace.Trace) (*trace.Trace, string, string) {
	if len(t.Steps) != 1 || !t.Steps[0].Synthetic {
		if len(t.Steps) == 0 {
			return t, StepSourceTrace, ""
		}
		return t, StepSourceProfiler, ""
	}
	lp := launchCounts(t)
	spans, label := repeatedRanges(t, lp)
	source := StepSourceRange
	if spans == nil {
		spans, label = repeatedCalls(t, lp)
		source = StepSourceCall
	}
	if spans == nil {
		spans, label = repeatedJitCalls(t, lp)
		source = StepSourceJit
	}
	if spans == nil {
		return t, StepSourceTrace, ""
	}
	c := *t
	c.Steps = make([]trace.Step, len(spans))
	for i, s := range spans {
		c.Steps[i] = trace.Step{Span: trace.Span{Name: label, Start: s.Start, End: s.End}, Number: i}
	}
	return &c, source, label
}

// launchCounts holds, per host thread, the start times of the calls that
// launched GPU work, sorted, to count launches inside a host interval.
func launchCounts(t *trace.Trace) map[trace.Index][]trace.Time {
	m := map[trace.Index][]trace.Time{}
	for i := range t.APICalls {
		if c := &t.APICalls[i]; isLaunchCall(c) {
			m[c.Thread] = append(m[c.Thread], c.Start)
		}
	}
	for _, v := range m {
		slices.Sort(v)
	}
	return m
}

func launchesIn(lc map[trace.Index][]trace.Time, th trace.Index, s trace.Span) int {
	v := lc[th]
	lo, _ := slices.BinarySearch(v, s.Start)
	hi, _ := slices.BinarySearch(v, s.End+1)
	return hi - lo
}

// stepCandidate is one repeated unit of host work.
type stepCandidate struct {
	label  string
	spans  []trace.Span
	total  trace.Duration
	thread trace.Index
	// parents are the enclosing frames of a function's calls.
	parents []trace.Index
}

// pick returns the candidate covering the most host time among those
// repeated at least MinDerivedSteps times, whose calls do not overlap and
// which launch GPU work in every call but possibly the first.
func pick(cands map[string]*stepCandidate) *stepCandidate {
	var best *stepCandidate
	for _, c := range cands {
		if len(c.spans) < MinDerivedSteps {
			continue
		}
		slices.SortFunc(c.spans, func(a, b trace.Span) int { return cmp.Compare(a.Start, b.Start) })
		overlap := false
		for i := 1; i < len(c.spans); i++ {
			if c.spans[i].Start < c.spans[i-1].End {
				overlap = true
			}
		}
		if overlap {
			continue
		}
		if best == nil || c.total > best.total || c.total == best.total && c.label < best.label {
			best = c
		}
	}
	return best
}

// stepRange reports whether a record_function range may mark a step: not
// on the GPU, not compilation or optimizer bookkeeping.
func stepRange(a *trace.Annotation) bool {
	return !a.GPU && !compileEvent(a.Name) && !optimizerRange(a.Name) && !strings.Contains(a.Name, "compile_id=") && !strings.HasPrefix(a.Name, "## ")
}

// repeatedRanges returns the iterations of the loop that the top-level
// record_function ranges launching GPU work form on one host thread.
func repeatedRanges(t *trace.Trace, lc map[trace.Index][]trace.Time) ([]trace.Span, string) {
	seqs := map[trace.Index][]unitElem{}
	topLevelLaunchingRanges(t, lc, func(a *trace.Annotation) {
		seqs[a.Thread] = append(seqs[a.Thread], unitElem{key: a.Name, span: a.Span})
	})
	return loopByThread(seqs, func(e unitElem) string { return e.key })
}

// topLevelLaunchingRanges calls f, in trace order, for each top-level
// record_function range (see stepRange) that launches GPU work.
func topLevelLaunchingRanges(t *trace.Trace, lc map[trace.Index][]trace.Time, f func(a *trace.Annotation)) {
	var outer trace.Span
	outerTh := trace.None
	for i := range t.Annotations {
		a := &t.Annotations[i]
		if !stepRange(a) {
			continue
		}
		// Annotations are sorted by thread then start, longest first: a
		// range inside the last top-level one is nested.
		if a.Thread == outerTh && outer.Contains(a.Span) {
			continue
		}
		outer, outerTh = a.Span, a.Thread
		if launchesIn(lc, a.Thread, a.Span) > 0 {
			f(a)
		}
	}
}

// rangeGroups groups the top-level record_function ranges that launch GPU
// work by name (trailing digits dropped), with the thread they run on.
// compiled-slower compares such groups; steps no longer come from them
// (names that differ are different things: repeatedRanges).
func rangeGroups(t *trace.Trace, lc map[trace.Index][]trace.Time) map[string]*stepCandidate {
	cands := map[string]*stepCandidate{}
	topLevelLaunchingRanges(t, lc, func(a *trace.Annotation) {
		key := strings.TrimRight(a.Name, "0123456789")
		c := cands[key]
		if c == nil {
			c = &stepCandidate{label: a.Name}
			if key != a.Name {
				c.label = key + "*"
			}
			cands[key] = c
		}
		c.spans = append(c.spans, a.Span)
		c.total += a.Dur()
		c.thread = a.Thread
	})
	return cands
}

// repeatedCalls returns the calls of the user Python function that is
// called repeatedly, launches GPU work each time and covers the most
// host time (the outermost such function: main() runs once, the
// simulate() it calls in a loop repeats, the kernels' callers inside
// simulate() cover less); or, when its calls share one caller, the
// iterations of the loop that caller's GPU-launching calls form
// (simulate() then log() in each iteration is one step of both).
func repeatedCalls(t *trace.Trace, lc map[trace.Index][]trace.Time) ([]trace.Span, string) {
	cands := map[string]*stepCandidate{}
	user := map[string]bool{}
	userCall := func(f *trace.PyFrame) bool {
		ok, seen := user[f.Name]
		if !seen {
			file, _, _, src := f.Source()
			ok = src && !libraryFile(file) && !strings.HasSuffix(f.Name, ": <module>")
			user[f.Name] = ok
		}
		return ok && launchesIn(lc, f.Thread, f.Span) > 0
	}
	for i := range t.Frames {
		f := &t.Frames[i]
		if !userCall(f) {
			continue
		}
		c := cands[f.Name]
		if c == nil {
			c = &stepCandidate{label: callLabel(f), thread: f.Thread}
			cands[f.Name] = c
		}
		c.spans = append(c.spans, f.Span)
		c.total += f.Dur()
		if !slices.Contains(c.parents, f.Parent) {
			c.parents = append(c.parents, f.Parent)
		}
	}
	best := pick(cands)
	if best == nil {
		return nil, ""
	}
	if len(best.parents) == 1 {
		var seq []unitElem
		for i := range t.Frames {
			if f := &t.Frames[i]; f.Thread == best.thread && f.Parent == best.parents[0] && userCall(f) {
				seq = append(seq, unitElem{key: f.Name, span: f.Span})
			}
		}
		slices.SortStableFunc(seq, func(a, b unitElem) int { return cmp.Compare(a.span.Start, b.span.Start) })
		label := func(e unitElem) string { return callLabel(&trace.PyFrame{Span: e.span}) }
		if spans, l := loopByThread(map[trace.Index][]unitElem{best.thread: seq}, label); spans != nil {
			return spans, l
		}
	}
	return best.spans, best.label
}

// callLabel names a user function's call: "simulate() at sim.py:12".
func callLabel(f *trace.PyFrame) string {
	file, line, fn, _ := f.Source()
	return fmt.Sprintf("%s() at %s:%d", fn, file, line)
}

// jitPrefix starts the host event JAX records around each call of a
// jitted function: "PjitFunction(train_step)".
const jitPrefix = "PjitFunction("

// repeatedJitCalls returns the iterations of the loop that the calls of
// jitted functions launching GPU work form on one host thread (one
// function called repeatedly, or train then eval, repeated). JAX records
// each call twice, one event inside the other: the outer one is the call.
func repeatedJitCalls(t *trace.Trace, lc map[trace.Index][]trace.Time) ([]trace.Span, string) {
	seqs := map[trace.Index][]unitElem{}
	for i := range t.Ops {
		o := &t.Ops[i]
		if !strings.HasPrefix(o.Name, jitPrefix) || launchesIn(lc, o.Thread, o.Span) == 0 {
			continue
		}
		if p := o.Parent; p != trace.None && strings.HasPrefix(t.Ops[p].Name, jitPrefix) {
			continue // the inner event of a call, or a jitted call inside another
		}
		seqs[o.Thread] = append(seqs[o.Thread], unitElem{key: o.Name, span: o.Span})
	}
	return loopByThread(seqs, func(e unitElem) string { return e.key })
}

// marksStep reports whether a range named name marks step rather than
// being work inside it: a ProfilerStep range, or the range a derived
// step is one call of (step's name is its label: the range's name, or
// its stem and "*" where an iteration counter was dropped).
func marksStep(name string, step trace.Span) bool {
	if strings.HasPrefix(name, "ProfilerStep#") || name == step.Name {
		return true
	}
	stem, ok := strings.CutSuffix(step.Name, "*")
	return ok && len(name) > len(stem) && strings.HasPrefix(name, stem) && strings.Trim(name[len(stem):], "0123456789") == ""
}

// WithSteps returns t as Run sees it: t itself when it marks steps (or
// repeats nothing), else a shallow copy whose Steps are the repeated
// top-level ranges or calls, with where they came from (a StepSource* and
// the range or function). A face that reads Trace.Steps next to
// Result.Steps must read this trace's.
func WithSteps(t *trace.Trace) (*trace.Trace, string, string) { return deriveSteps(t) }

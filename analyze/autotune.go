package analyze

import (
	"cmp"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// autotuneRange reports whether an op or record_function range is
// torch.compile doing its own work on the GPU: Inductor's autotuner timing
// candidate kernels (benchmark runs and the L2-cache flushes between
// them), max-autotune's algorithm selection, or compilation itself. GPU
// work launched inside one is not the program's workload.
func autotuneRange(name string) bool {
	if compileEvent(name) {
		return true
	}
	n := strings.ToLower(name)
	if strings.Contains(n, "load_cached") || strings.Contains(n, "warm_precompile") {
		// Reading autotuning results from a cache launches nothing.
		return false
	}
	for _, s := range []string{"autotun", "benchmark_all_configs", "select_algorithm", "benchmark_choice", "benchmark_example_value",
		"do_bench", "benchmark_gpu", "benchmark_fused_nodes"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// AutotuneLaunches marks, per GPU activity of t, whether it ran for
// torch.compile's autotuner or compiler (launched inside an op or a
// record_function range that autotuneRange recognises, on the launching
// thread) rather than for the workload. It returns nil when the trace has
// no such range.
func AutotuneLaunches(t *trace.Trace) []bool {
	// top and demo call this once, without an analysis: each chunk keeps
	// its own memo of names rather than a HostTable being built, whose
	// frame columns (1.9 M frames on a compile trace) nothing here reads.
	return autotuneMarks(t, mapChunks(len(t.Ops), func(lo, hi int) threadSpans {
		var memo nameCache[bool]
		part := threadSpans{}
		for i := lo; i < hi; i++ {
			if o := &t.Ops[i]; memo.get(o.Name, autotuneRange) {
				part.add(o.Thread, o.Span)
			}
		}
		return part
	}))
}

// autotuneLaunches is AutotuneLaunches over t's HostTable host: the ops'
// name column is read, not the ops (the autotuner's are few).
func autotuneLaunches(t *trace.Trace, host *hostTable) []bool {
	ops := &host.ops
	isAutotune := byName(ops, autotuneRange)
	return autotuneMarks(t, mapChunks(len(ops.name), func(lo, hi int) threadSpans {
		part := threadSpans{}
		for i, n := range ops.name[lo:hi] {
			if isAutotune[n] {
				o := &t.Ops[lo+i]
				part.add(o.Thread, o.Span)
			}
		}
		return part
	}))
}

// autotuneMarks marks the GPU activities launched inside the autotuner's
// op spans (parts: the ops classified in chunks side by side, joined here
// in chunk order, so each thread's spans come in op order) or its host
// annotations; nil when there are none.
func autotuneMarks(t *trace.Trace, parts []threadSpans) []bool {
	spans := threadSpans{}
	for _, part := range parts {
		for th, s := range part {
			spans[th] = append(spans[th], s...)
		}
	}
	var memo nameCache[bool]
	for i := range t.Annotations {
		if a := &t.Annotations[i]; !a.GPU && memo.get(a.Name, autotuneRange) {
			spans.add(a.Thread, a.Span)
		}
	}
	if len(spans) == 0 {
		return nil
	}
	spans.merge()
	out := make([]bool, len(t.GPU))
	inChunks(len(t.GPU), func(lo, hi int) {
		for g := lo; g < hi; g++ {
			if l := t.GPU[g].Launch; l != trace.None {
				out[g] = spans.contains(t.APICalls[l].Thread, t.APICalls[l].Start)
			}
		}
	})
	return out
}

// threadSpans are host intervals per thread; after merge, sorted and
// disjoint.
type threadSpans map[trace.Index][]trace.Span

func (ts threadSpans) add(th trace.Index, s trace.Span) { ts[th] = append(ts[th], s) }

func (ts threadSpans) merge() {
	for th, s := range ts {
		ts[th] = mergedSpans(s)
	}
}

// contains reports whether time at on thread th lies inside a span.
func (ts threadSpans) contains(th trace.Index, at trace.Time) bool {
	s := ts[th]
	i, _ := slices.BinarySearchFunc(s, at, func(sp trace.Span, at trace.Time) int { return cmp.Compare(sp.End, at) })
	return i < len(s) && s[i].Start <= at
}

package ingest

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// StepsFromRange makes the host ranges (annotations) named name the
// trace's steps, in time order, replacing the steps the reader found
// (--step-range NAME: an NVTX range of an Nsight Systems export or a
// record_function range of a torch.profiler trace). A range nested in
// another of the same name on its thread is part of that step; a step
// that outlasts the next one's start ends there, so steps never overlap.
// It is an error when no range has that name; the error names the
// commonest ranges.
func StepsFromRange(t *trace.Trace, name string) error {
	var spans []trace.Annotation
	for _, a := range t.Annotations {
		if a.Name == name && !a.GPU {
			spans = append(spans, a)
		}
	}
	if len(spans) == 0 {
		return fmt.Errorf("%s: no range named %q (%s)", t.Source, name, commonRanges(t, 5))
	}
	slices.SortStableFunc(spans, func(a, b trace.Annotation) int {
		if c := cmp.Compare(a.Thread, b.Thread); c != 0 {
			return c
		}
		return bySpan(a.Span, b.Span)
	})
	var steps []trace.Step
	for i, a := range spans {
		if i > 0 && spans[i-1].Thread == a.Thread && steps[len(steps)-1].Contains(a.Span) {
			continue // nested in the previous step of its thread
		}
		steps = append(steps, trace.Step{Span: a.Span})
	}
	slices.SortStableFunc(steps, func(a, b trace.Step) int { return bySpan(a.Span, b.Span) })
	for i := range steps {
		steps[i].Number = i
		if i > 0 && steps[i-1].End > steps[i].Start {
			steps[i-1].End = max(steps[i].Start, steps[i-1].Start)
		}
	}
	t.Steps = steps
	return nil
}

// commonRanges names up to n of the commonest host range names.
func commonRanges(t *trace.Trace, n int) string {
	count := map[string]int{}
	for _, a := range t.Annotations {
		if !a.GPU {
			count[a.Name]++
		}
	}
	if len(count) == 0 {
		return "the trace has no ranges"
	}
	names := make([]string, 0, len(count))
	for k := range count {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(count[b], count[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, k := range names[:min(n, len(names))] {
		parts = append(parts, fmt.Sprintf("%q ×%d", k, count[k]))
	}
	return "the commonest ranges: " + strings.Join(parts, ", ")
}

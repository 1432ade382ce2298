package analyze

import (
	"fmt"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// profilerOptions returns the torch.profiler options that add host-side
// work to every op the trace records: with_stack (Python frames),
// profile_memory (allocator events), record_shapes (input shapes).
func profilerOptions(t *trace.Trace) []string {
	opts := []string{}
	if len(t.Frames) > 0 {
		opts = append(opts, "with_stack")
	}
	if len(t.Memory) > 0 {
		opts = append(opts, "profile_memory")
	}
	for i := range t.Ops {
		if t.Ops[i].InputDims != "" {
			opts = append(opts, "record_shapes")
			break
		}
	}
	return opts
}

// addProfilerCaveat records the options in the result and adds a caveat
// to every finding whose saving is host time or GPU idle time caused by
// the host: the profiler's own per-op work inflates exactly those.
func addProfilerCaveat(t *trace.Trace, r *Result) {
	opts := profilerOptions(t)
	r.ProfilerOptions = opts
	if len(opts) == 0 || t.Meta.CUDAProgram() {
		return
	}
	text := fmt.Sprintf("caveat: the trace was recorded with %s, which add host work to every op (Python frames, allocator events, "+
		"shape recording): the host times this finding rests on are inflated; confirm on a run profiled without them", strings.Join(opts, ", "))
	for i := range r.Findings {
		f := &r.Findings[i]
		switch f.SavingFrom {
		case FromGPUIdle, FromHostWaits, FromLaunchGaps:
			f.Evidence = append(f.Evidence, Evidence{Text: text})
		}
	}
}

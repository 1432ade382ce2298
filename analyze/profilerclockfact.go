package analyze

// ProfilerClock is the profiler's own host cost per recorded event
// (profilerClock) over the trace: the sorted starts of the ops, frames
// and allocator events it prices. Sorting them takes a few hundredths of
// a second on a trace of a million events, and four analyzers and the
// profiler-cost estimate price intervals with it: built once, shared.
// Its value is a *profilerClock, nil for a trace whose profiler's costs
// were never measured (not torch.profiler).
var ProfilerClock = &Analyzer{
	Name:     "profiler-clock",
	Doc:      "Prices the profiler's own host work in an interval from the ops, Python frames and allocator events recorded in it (torch.profiler traces only).",
	Requires: []*Analyzer{HostTable},
	Fact: func(p *Pass) (any, error) {
		host, err := hostTableOf(p)
		if err != nil {
			return nil, err
		}
		return newProfilerClock(p.Trace, host), nil
	},
}

// profilerClockOf is the ProfilerClock fact of p's analyzer, which must
// require it.
func profilerClockOf(p *Pass) (*profilerClock, error) {
	return FactOf[*profilerClock](p, ProfilerClock)
}

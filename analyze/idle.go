package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// Thresholds of gpu-idle.
const (
	// GPUIdleMinShare is the share of the median step the GPU must spend
	// idle in long gaps (LaunchGap or longer) for gpu-idle to report it.
	GPUIdleMinShare = 0.2
	// GPUIdleMaxGaps bounds the gaps listed as evidence.
	GPUIdleMaxGaps = 5
)

// GPUIdle finds long GPU idle gaps inside steps and where the host was.
var GPUIdle = &Analyzer{
	Name: "gpu-idle",
	Doc: fmt.Sprintf("Finds GPU idle gaps of at least %s inside steps (short gaps between launches are launch-bound's business), "+
		"reported when they add up to at least %.0f%% of the median step (after the first); gaps covered by torch.compile work are "+
		"left to compile-overhead. Without step markers the gaps before the first and after the last GPU activity "+
		"(profiler start and stop) do not count. For the longest gaps it names where the host was: the user Python functions, "+
		"record_function ranges, ops or sync calls that overlap the gap most. Saving model: the long-gap idle time "+
		"per step, which overlapping that host work with GPU work (a DataLoader with workers, prefetching, moving Python work "+
		"out of the loop) hides.", LaunchGap, GPUIdleMinShare*100),
	Requires: []*Analyzer{IdleGaps, CompileRegions},
	Run:      runGPUIdle,
}

type idleGap struct {
	span trace.Span
	step int
}

func runGPUIdle(p *Pass) ([]Finding, error) {
	t, ix, r := p.Trace, p.ix, p.Result
	steps := steadySteps(r)
	if len(steps) == 0 || len(ix.devices) == 0 {
		return nil, nil
	}
	wall := medianOf(steps, func(s *Step) float64 { return s.WallUs })
	compile := mergedSpans(p.compileSpans())
	first := 0
	if len(t.Steps) > 1 {
		first = 1
	}
	var gaps []idleGap
	perStep := make([]float64, 0, len(t.Steps)-first)
	for si := first; si < len(t.Steps); si++ {
		st := t.Steps[si]
		var long trace.Duration
		for _, dev := range ix.devices {
			gs := ix.idleGaps(dev, st.Start, st.End)
			if st.Synthetic && len(gs) > 0 {
				// Without step markers the step is the whole trace: its
				// leading and trailing gaps are the profiler starting and
				// stopping, not the workload.
				if gs[0].Start == st.Start {
					gs = gs[1:]
				}
				if n := len(gs); n > 0 && gs[n-1].End == st.End {
					gs = gs[:n-1]
				}
			}
			for _, g := range gs {
				if g.Dur() < LaunchGap || coveredBy(g, compile) {
					continue
				}
				long += g.Dur()
				gaps = append(gaps, idleGap{g, st.Number})
			}
		}
		perStep = append(perStep, us(long))
	}
	idle := median(perStep)
	if wall <= 0 || idle < GPUIdleMinShare*wall {
		return nil, nil
	}
	slices.SortFunc(gaps, func(a, b idleGap) int { return cmp.Compare(b.span.Dur(), a.span.Dur()) })
	tb := NewTable(Col("step", KindCount), Col("at", KindDuration), Col("gap", KindDuration), Col("host was in", KindName))
	var places []string
	for _, g := range gaps[:min(len(gaps), GPUIdleMaxGaps)] {
		picked := ix.hostActivity(g.span)
		parts := make([]string, 0, len(picked))
		for _, c := range picked {
			parts = append(parts, fmt.Sprintf("%s (%s)", c.name, c.overlap))
			if !slices.Contains(places, c.name) {
				places = append(places, c.name)
			}
		}
		if len(parts) == 0 {
			parts = append(parts, "-")
		}
		tb.Add(Count(float64(g.step)), Dur(trace.Duration(g.span.Start-t.Steps[0].Start)), Dur(g.span.Dur()), NameCell(strings.Join(parts, " + ")))
	}
	whereText := strings.Join(places, "; ")
	if whereText == "" {
		whereText = "host code between launches"
	}
	return []Finding{{
		Title:      fmt.Sprintf("GPU idle %s per step (%.0f%%) in gaps ≥ %s; host in %s", fmtUs(idle), idle/wall*100, LaunchGap, ClipName(firstOr(places, "other work"), 40)),
		Subject:    "long GPU idle gaps",
		Severity:   severityByShare(idle / wall),
		SavingUs:   idle,
		SavingFrom: FromHostWaits,
		Measures: []Measure{
			{"median step", DurUs(wall)},
			{"long-gap idle per step", DurUs(idle)},
		},
		Evidence: []Evidence{
			{Text: fmt.Sprintf("median step after the first: wall %s, GPU idle in gaps ≥ %s: %s", fmtUs(wall), LaunchGap, fmtUs(idle))},
			{Text: "longest gaps and what the host was doing:", Table: tb},
			{Text: "saving model: the long-gap idle time per step, hidden when that host work overlaps GPU work"},
		},
		Fix: fmt.Sprintf("take the host work out of the GPU's critical path (%s): load and preprocess batches in a DataLoader with num_workers > 0 and pin_memory=True, "+
			"prefetch the next batch while the current step runs, move per-step Python bookkeeping (logging, metrics, .item()) out of the loop or do it every N steps", whereText),
		Confidence: Medium,
	}}, nil
}

func firstOr(s []string, def string) string {
	if len(s) > 0 {
		return s[0]
	}
	return def
}

// coveredBy reports whether at least half of g lies inside the union of
// merged, which is sorted and disjoint (see mergedSpans).
func coveredBy(g trace.Span, merged []trace.Span) bool {
	i, _ := slices.BinarySearchFunc(merged, g.Start, func(s trace.Span, at trace.Time) int { return cmp.Compare(s.End, at) })
	var in trace.Duration
	for ; i < len(merged) && merged[i].Start < g.End; i++ {
		lo, hi := max(g.Start, merged[i].Start), min(g.End, merged[i].End)
		if hi > lo {
			in += trace.Duration(hi - lo)
		}
	}
	return 2*in >= g.Dur()
}

// mergedSpans returns the union of spans as sorted disjoint spans.
func mergedSpans(spans []trace.Span) []trace.Span { return unionSpans(slices.Clone(spans)) }

// compileSpans returns the torch.compile ranges of the trace (the
// CompileRegions fact).
func (p *Pass) compileSpans() []trace.Span { return p.ix.CompileFacts.Spans() }

// clashes reports whether s overlaps a picked candidate by more than half
// of s.
func clashes[T interface{ getSpan() trace.Span }](s trace.Span, picked []T) bool {
	for _, p := range picked {
		ps := p.getSpan()
		lo, hi := max(s.Start, ps.Start), min(s.End, ps.End)
		if hi > lo && 2*trace.Duration(hi-lo) > s.Dur() {
			return true
		}
	}
	return false
}

// hostCand is a range that may explain a GPU idle gap.
type hostCand struct {
	name    string
	span    trace.Span
	overlap trace.Duration
}

func (c hostCand) getSpan() trace.Span { return c.span }

// hostActivity returns what the host was doing during gap: the user
// Python functions, record_function ranges, ops and sync calls that overlap
// it most (ignoring ranges much longer than the gap, like the step function
// itself), at most two that do not overlap each other.
func (ix *index) hostActivity(gap trace.Span) []hostCand {
	t := ix.t
	var cands []hostCand
	consider := func(name string, s trace.Span) {
		lo, hi := max(gap.Start, s.Start), min(gap.End, s.End)
		if hi <= lo || 5*trace.Duration(hi-lo) < gap.Dur() || 4*s.Dur() > 5*gap.Dur() {
			return
		}
		cands = append(cands, hostCand{name, s, trace.Duration(hi - lo)})
	}
	overlapsGap := func(s trace.Span) bool { return s.End >= gap.Start && s.Start <= gap.End }
	for i := range t.Frames {
		f := &t.Frames[i]
		if !overlapsGap(f.Span) {
			continue
		}
		file, line, fn, ok := f.Source()
		if ok && !libraryFile(file) {
			consider(fmt.Sprintf("%s() at %s:%d", fn, file, line), f.Span)
		}
	}
	for i := range t.Annotations {
		a := &t.Annotations[i]
		if overlapsGap(a.Span) && !strings.HasPrefix(a.Name, "ProfilerStep#") {
			consider(a.Name, a.Span)
		}
	}
	for i := range t.Ops {
		o := &t.Ops[i]
		if o.Parent == trace.None && overlapsGap(o.Span) {
			// Top-level ops only: the call the user made, not its internals.
			consider(o.Name, o.Span)
		}
	}
	for i := range t.APICalls {
		c := &t.APICalls[i]
		if overlapsGap(c.Span) && isSyncCall(c.Name) {
			consider(c.Name, c.Span)
		}
	}
	// Pick the largest overlap; among near ties (within 10%) the shortest
	// range, which names the specific call rather than the function
	// around it. Then the next largest that does not overlap it.
	var picked []hostCand
	for len(picked) < 2 {
		var best trace.Duration
		for _, c := range cands {
			if !clashes(c.span, picked) {
				best = max(best, c.overlap)
			}
		}
		if best == 0 {
			break
		}
		pick := -1
		for i, c := range cands {
			if clashes(c.span, picked) || 10*c.overlap < 9*best {
				continue
			}
			if pick < 0 || c.span.Dur() < cands[pick].span.Dur() {
				pick = i
			}
		}
		picked = append(picked, cands[pick])
	}
	return picked
}

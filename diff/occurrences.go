package diff

import (
	"fmt"
	"math"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/stats"
	"github.com/tracelens/tracelens/trace"
)

// Occurrences compares the individual occurrences (a kernel's launches, an
// op's calls) of one row between the runs, for rows whose steps are too
// few for the per-step test: an effect size with an interval, not a test.
// Occurrences inside one step share its conditions (clocks, memory, what
// else ran), so they are not independent samples of the run: the interval
// says how precisely these occurrences pin the typical change, not that it
// would hold over other steps.
type Occurrences struct {
	// NBase and NNew are the occurrences in the compared steps.
	NBase, NNew int
	// Ratio is exp of the Hodges–Lehmann shift of the log durations: the
	// factor new/base of a typical occurrence's duration (0.5: half as
	// long). Lo and Hi bound it with the distribution-free interval from
	// the Mann–Whitney distribution (stats.ShiftInterval) at Confidence.
	Ratio, Lo, Hi float64
	Confidence    float64
	// Exact is true when the interval's order statistic came from the
	// exact distribution (fewer than stats.ExactShiftLimit a side), false
	// for the normal approximation.
	Exact bool
	// Bounded is false when the occurrences are too few for any interval
	// to reach 1 − α (3+3 cannot: both extreme orderings already have
	// probability 0.1); Lo, Hi and Confidence are then 0.
	Bounded bool
}

// ExcludesNoChange reports whether the interval leaves out a ratio of 1:
// these occurrences are consistently longer or shorter.
func (o *Occurrences) ExcludesNoChange() bool { return o.Bounded && (o.Lo > 1 || o.Hi < 1) }

// OccurrenceNote is the footnote that labels every occurrence figure.
const OccurrenceNote = "per occurrence: Hodges–Lehmann ratio new/base of a typical occurrence's duration (a kernel's launch, an op's call) with its distribution-free interval over the occurrences in the compared steps; occurrences within a step are not independent, so this is an effect size, not a test across steps"

// minOccurrenceUs floors durations before the logarithm: the traces'
// resolution (1 ns), so a zero-length record stays finite.
const minOccurrenceUs = 1e-3

// compareOccurrences is the occurrence-level comparison of base and new
// durations (µs) at 1 − alpha (unbounded when they are too few for any
// interval at that level), or nil when either side has none.
func compareOccurrences(base, new []float64, alpha float64) *Occurrences {
	logs := func(v []float64) []float64 {
		out := make([]float64, len(v))
		for i, us := range v {
			out[i] = math.Log(max(us, minOccurrenceUs))
		}
		return out
	}
	if len(base) == 0 || len(new) == 0 {
		return nil
	}
	s, ok := stats.ShiftInterval(logs(base), logs(new), alpha)
	o := &Occurrences{NBase: len(base), NNew: len(new), Ratio: math.Exp(s.Estimate), Exact: s.Exact}
	if ok {
		o.Lo, o.Hi, o.Confidence, o.Bounded = math.Exp(s.Lo), math.Exp(s.Hi), s.Confidence, true
	}
	return o
}

// perStepUntestable reports whether per-step samples of these sizes can
// never reach alpha: the case for the occurrence-level comparison.
func perStepUntestable(n1, n2 int, alpha float64) bool {
	return n1 > 0 && n2 > 0 && stats.MinP(n1, n2) >= alpha
}

// occurrenceText prints an occurrence comparison for a table cell:
// "per occurrence ×0.152 [0.150, 0.154]", with "faster"/"slower" when the
// interval excludes no change.
func occurrenceText(o *Occurrences) string {
	if !o.Bounded {
		return fmt.Sprintf("per occurrence ×%s (%d+%d: too few for an interval)", ratioText(o.Ratio), o.NBase, o.NNew)
	}
	s := fmt.Sprintf("per occurrence ×%s [%s, %s]", ratioText(o.Ratio), ratioText(o.Lo), ratioText(o.Hi))
	switch {
	case o.Hi < 1:
		s += " shorter"
	case o.Lo > 1:
		s += " longer"
	}
	return s
}

// ratioText prints a ratio with three significant digits, trailing zeros
// kept ("1.00").
func ratioText(r float64) string { return fmt.Sprintf("%#.3g", r) }

// kernelKey tells kernel rows apart as analyze's kernel table does: by
// name, and whether torch.compile's autotuner made the launches.
type kernelKey struct {
	name     string
	autotune bool
}

// kernelOccurrences returns each kernel's launch durations (µs) in the
// compared steps (from first on), by the view's step of each launch; nil
// when the analysis has no view (a Result decoded from JSON).
func kernelOccurrences(a *analyze.Result, first int) map[kernelKey][]float64 {
	v := a.View()
	if v == nil {
		return nil
	}
	t := v.Trace()
	out := map[kernelKey][]float64{}
	for g := range t.GPU {
		act := &t.GPU[g]
		if act.Kind != trace.Kernel || v.StepOf(g) < first {
			continue
		}
		k := kernelKey{act.Name, v.Autotune(g)}
		out[k] = append(out[k], float64(act.Dur())/1e3)
	}
	return out
}

// opOccurrences returns each op's call durations (µs, inclusive of its
// children) in the compared steps: the calls whose time analyze's per-step
// op figure sums (those with no caller of the same name, by the step
// holding their start). Nil without a view.
func opOccurrences(a *analyze.Result, first int) map[string][]float64 {
	v := a.View()
	if v == nil {
		return nil
	}
	t := v.Trace()
	out := map[string][]float64{}
	for i := range t.Ops {
		o := &t.Ops[i]
		if t.StepOf(o.Start) < first || nestedInSameName(t, i) {
			continue
		}
		out[o.Name] = append(out[o.Name], float64(o.Dur())/1e3)
	}
	return out
}

// nestedInSameName reports whether op i has an ancestor of its own name
// (aten::add inside aten::add): analyze counts only the outer call's time.
func nestedInSameName(t *trace.Trace, i int) bool {
	name := t.Ops[i].Name
	for p := t.Ops[i].Parent; p != trace.None; p = t.Ops[p].Parent {
		if t.Ops[p].Name == name {
			return true
		}
	}
	return false
}

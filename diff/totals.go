package diff

import (
	"cmp"
	"math"
	"slices"

	"github.com/tracelens/tracelens/analyze"
)

// TotalRow compares a per-step figure from the analysis (ops,
// annotations): the CPU time per step, inclusive of child ops (an op's
// calls nested in a call of the same name counted once, as analyze's
// OpStat.TotalCPUUs), tested across steps like kernel rows, or, with too
// few steps, op by op (Occurrences).
type TotalRow struct {
	Name string
	// Kind is "op", or the annotation kind (analyze.AnnotationRange,
	// analyze.AnnotationModule).
	Kind string
	// BaseUs and NewUs are the mean CPU time per compared step (analyze's
	// per-step figures, the warm-up step left out as for every other
	// row); BaseCalls and NewCalls the calls in the compared steps.
	BaseUs, NewUs       float64
	BaseCalls, NewCalls int
	// Pct is the change in percent; NaN when BaseUs is 0.
	Pct float64
	// Steps compares the per-step time (whose means are BaseUs and NewUs)
	// with the U test, as Row.Delta does for kernels; a side without the
	// row counts 0 in each of its compared steps.
	Steps Delta
	// Occurrences compares an op's calls one by one (their inclusive CPU
	// time) when the steps are too few for Steps to be tested; nil
	// otherwise, for annotations, and without the traces.
	Occurrences *Occurrences
}

// pct is the change from b to n in percent, NaN when b is 0 and n is not.
func pct(b, n float64) float64 {
	switch {
	case b == n:
		return 0
	case b == 0:
		return math.NaN()
	}
	return (n/b - 1) * 100
}

// total is one op's or annotation's figures per step, from the analysis.
type total struct {
	kind, name string
	perStep    []analyze.StepShare
}

func opTotals(a *analyze.Result) []total {
	out := make([]total, 0, len(a.Ops))
	for _, op := range a.Ops {
		out = append(out, total{"op", op.Name, op.PerStep})
	}
	return out
}

func annotationTotals(a *analyze.Result) []total {
	out := make([]total, 0, len(a.Annotations))
	for _, an := range a.Annotations {
		out = append(out, total{an.Kind, an.Name, an.PerStep})
	}
	return out
}

// totalSide is one run's figures for one op or annotation row.
type totalSide struct {
	perStep []float64
	calls   int
	occ     []float64
}

// compareTotals pairs the rows list gives for each run by kind and name
// and compares their CPU time per compared step (the same steps as every
// other per-step figure of the comparison): the mean, the U test across
// steps, and, where occ gives each name's occurrences (ops) and the steps
// are too few for the test, the occurrence-level comparison.
func compareTotals(b, n *analyze.Result, list func(*analyze.Result) []total, occ func(*analyze.Result, int) map[string][]float64, keepWarmup bool, alpha float64) []TotalRow {
	type key struct{ kind, name string }
	sides := map[key]*[2]totalSide{}
	var order []key
	runs := []*analyze.Result{b, n}
	var samples [2]int
	for side, a := range runs {
		samples[side] = len(a.Steps) - firstCompared(len(a.Steps), keepWarmup)
	}
	if !perStepUntestable(samples[0], samples[1], alpha) {
		occ = nil // the per-step test decides: no need for single calls
	}
	for side, a := range runs {
		first := firstCompared(len(a.Steps), keepWarmup)
		var occs map[string][]float64
		if occ != nil {
			occs = occ(a, first)
		}
		for _, t := range list(a) {
			k := key{t.kind, t.name}
			if sides[k] == nil {
				sides[k] = &[2]totalSide{}
				order = append(order, k)
			}
			sr := sampled("", "", t.perStep, first)
			if sr == nil {
				continue
			}
			ts := &sides[k][side]
			if ts.perStep == nil {
				ts.perStep = make([]float64, len(sr.perStep))
			}
			for i, us := range sr.perStep {
				ts.perStep[i] += us
			}
			ts.calls += sr.count
			ts.occ = occs[t.name]
		}
	}
	rows := make([]func() TotalRow, 0, len(order))
	for _, k := range order {
		s := sides[k]
		if s[0].calls == 0 && s[1].calls == 0 {
			continue // only outside the compared steps
		}
		rows = append(rows, func() TotalRow { return totalRow(k.kind, k.name, s, samples, alpha) })
	}
	out := sideBySide(rows)
	sortTotals(out)
	return out
}

// totalRow compares one op's or annotation's two sides.
func totalRow(kind, name string, s *[2]totalSide, samples [2]int, alpha float64) TotalRow {
	r := TotalRow{Name: name, Kind: kind, BaseCalls: s[0].calls, NewCalls: s[1].calls}
	per := [2][]float64{}
	for i := range per {
		per[i] = s[i].perStep
		if per[i] == nil {
			per[i] = make([]float64, samples[i])
		}
	}
	r.BaseUs, r.NewUs = mean(per[0]), mean(per[1])
	r.Pct = pct(r.BaseUs, r.NewUs)
	r.Steps = CompareSamples(per[0], per[1], alpha)
	if s[0].calls > 0 && s[1].calls > 0 && perStepUntestable(len(per[0]), len(per[1]), alpha) {
		r.Occurrences = compareOccurrences(s[0].occ, s[1].occ, alpha)
	}
	return r
}

// mean is the mean of v, 0 for none.
func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	return sum / float64(len(v))
}

// sortTotals puts the largest absolute change first.
func sortTotals(rows []TotalRow) {
	slices.SortStableFunc(rows, func(a, b TotalRow) int {
		if c := cmp.Compare(math.Abs(b.NewUs-b.BaseUs), math.Abs(a.NewUs-a.BaseUs)); c != 0 {
			return c
		}
		if c := cmp.Compare(max(b.BaseUs, b.NewUs), max(a.BaseUs, a.NewUs)); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
}

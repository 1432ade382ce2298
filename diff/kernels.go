package diff

import (
	"cmp"
	"math"
	"slices"
)

// Status tells what happened to a kernel (or category) between runs.
type Status string

// Kernel statuses. Same and Changed are decided by the U test, so a kernel
// whose time moved within the noise stays Same. When the test cannot
// decide (too few steps a side: with 2 steps a side the smallest p-value is
// 0.33), "same" would assert what was never tested, so the row is judged
// on its medians instead: ChangedUntested when they moved by more than
// UntestedChangePct, Untested otherwise.
const (
	Same            Status = "same"
	Changed         Status = "changed"
	ChangedUntested Status = "changed, untested"
	Untested        Status = "untested"
	Added           Status = "added"
	Removed         Status = "removed"
)

// UntestedChangePct is the change of the median, in percent either way,
// above which a row the U test cannot judge is reported as
// ChangedUntested: large enough to stay clear of the ±1–8 % step-to-step
// spread of real GPU traces.
const UntestedChangePct = 10

// Match tells how a kernel row's base and new kernels were paired.
type Match string

// How rows pair up: by exact name first, then by normalized name within the
// same category (NormalizeKernelName); added and removed rows have none.
const (
	ByName       Match = "name"
	ByNormalized Match = "normalized"
	Unmatched    Match = ""
)

// Row is one kernel or kernel category compared between runs. Its Delta
// compares the time per step (the sum over each step's launches, 0 in a
// step without any), so runs with different step counts compare fairly.
type Row struct {
	// Name is the kernel name both runs share, the normalized name when
	// Match is ByNormalized, the kernel's name in its one run for added and
	// removed kernels, or the category name in category rows.
	Name string
	// BaseNames and NewNames list the exact names a ByNormalized row
	// merges; nil otherwise.
	BaseNames, NewNames []string
	Status              Status
	Match               Match
	Category            string
	// BaseTotalUs and NewTotalUs are the time over the compared steps,
	// BaseCount and NewCount the launches in them.
	BaseTotalUs, NewTotalUs float64
	BaseCount, NewCount     int
	Delta
	// Occurrences compares the kernel's launches one by one when the
	// steps are too few for the per-step test (fewer than
	// stats.MinSamples(α) a side): an occurrence-level effect size with an
	// interval, not a test across steps. Nil otherwise, for added and
	// removed rows, for categories, and without the traces.
	Occurrences *Occurrences
}

// series is one kernel's (or category's) samples in one run.
type series struct {
	name     string
	category string
	// perStep is the time in µs in each compared step; count and total
	// cover the compared steps.
	perStep []float64
	count   int
	total   float64
	// occ holds the durations (µs) of each occurrence in the compared
	// steps (kernels only, when the steps are too few for the per-step
	// test; nil without the trace); autotune marks a kernel row of
	// torch.compile's autotuner launches (analyze.KernelTiming.Autotune).
	occ      []float64
	autotune bool
}

func (s *series) merge(o *series) {
	for i := range s.perStep {
		s.perStep[i] += o.perStep[i]
	}
	s.occ = append(s.occ, o.occ...)
	s.count += o.count
	s.total += o.total
}

// matchKernels pairs kernels by exact name, then the rest by normalized
// name within a category; what remains is added or removed.
func matchKernels(base, new []*series, samples [2]int, alpha float64) []Row {
	newByName := map[string]*series{}
	for _, s := range new {
		newByName[s.name] = s
	}
	var rows []func() Row
	paired := map[string]bool{}
	var restBase []*series
	for _, s := range base {
		if o, ok := newByName[s.name]; ok {
			rows = append(rows, func() Row { return pairRow(s.name, s, o, ByName, samples, alpha) })
			paired[s.name] = true
			continue
		}
		restBase = append(restBase, s)
	}
	var restNew []*series
	for _, s := range new {
		if !paired[s.name] {
			restNew = append(restNew, s)
		}
	}
	// Group what is left by normalized name and category; a group found in
	// both runs becomes one row summing its kernels.
	bg, border := groupNormalized(restBase)
	ng, norder := groupNormalized(restNew)
	for _, k := range border {
		b := bg[k]
		if n, ok := ng[k]; ok {
			rows = append(rows, func() Row {
				row := pairRow(k.norm, b.merged, n.merged, ByNormalized, samples, alpha)
				row.BaseNames, row.NewNames = sortedNames(b.members), sortedNames(n.members)
				return row
			})
			continue
		}
		for _, s := range b.members {
			rows = append(rows, func() Row { return pairRow(s.name, s, nil, Unmatched, samples, alpha) })
		}
	}
	for _, k := range norder {
		if _, ok := bg[k]; ok {
			continue
		}
		for _, s := range ng[k].members {
			rows = append(rows, func() Row { return pairRow(s.name, nil, s, Unmatched, samples, alpha) })
		}
	}
	return sortedRows(rows)
}

// normKey is what matchKernels groups unpaired kernels by: the normalized
// name within a category.
type normKey struct{ norm, cat string }

// normGroup is the kernels of one run sharing a normKey: merged sums them
// (a copy, the members left as they are), members lists them in order.
type normGroup struct {
	merged  *series
	members []*series
}

// groupNormalized groups ss by normKey, returning the groups and their
// keys in first-seen order, so the rows come out in a deterministic order.
func groupNormalized(ss []*series) (map[normKey]*normGroup, []normKey) {
	groups := map[normKey]*normGroup{}
	var order []normKey
	for _, s := range ss {
		k := normKey{NormalizeKernelName(s.name), s.category}
		g := groups[k]
		if g == nil {
			c := *s
			c.perStep = slices.Clone(s.perStep)
			c.occ = slices.Clone(s.occ)
			groups[k] = &normGroup{merged: &c, members: []*series{s}}
			order = append(order, k)
			continue
		}
		g.merged.merge(s)
		g.members = append(g.members, s)
	}
	return groups, order
}

// sortedNames lists the names of ss, sorted: the exact names a
// ByNormalized row merges.
func sortedNames(ss []*series) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.name
	}
	slices.Sort(out)
	return out
}

// sortedRows computes rows side by side and sorts them; none is nil (JSON
// null, as before they ran side by side).
func sortedRows(rows []func() Row) []Row {
	if len(rows) == 0 {
		return nil
	}
	out := sideBySide(rows)
	sortRows(out)
	return out
}

// compareSeries pairs series by exact name only (categories).
func compareSeries(base, new []*series, samples [2]int, alpha float64) []Row {
	newByName := map[string]*series{}
	for _, s := range new {
		newByName[s.name] = s
	}
	var rows []func() Row
	for _, s := range base {
		o := newByName[s.name]
		m := ByName
		if o == nil {
			m = Unmatched
		}
		rows = append(rows, func() Row { return pairRow(s.name, s, o, m, samples, alpha) })
		delete(newByName, s.name)
	}
	for _, s := range new {
		if _, ok := newByName[s.name]; ok {
			rows = append(rows, func() Row { return pairRow(s.name, nil, s, Unmatched, samples, alpha) })
		}
	}
	return sortedRows(rows)
}

// pairRow compares two series; either may be nil (added, removed), and
// then counts as zero in each of that run's compared steps (samples holds
// the base and new step counts), so a vanished kernel's −100% is tested
// like any other change.
func pairRow(name string, b, n *series, m Match, samples [2]int, alpha float64) Row {
	row := Row{Name: name, Match: m}
	var bs, ns []float64
	if b != nil {
		row.Category, row.BaseTotalUs, row.BaseCount, bs = b.category, b.total, b.count, b.perStep
	}
	if n != nil {
		row.Category, row.NewTotalUs, row.NewCount, ns = n.category, n.total, n.count, n.perStep
	}
	if b == nil {
		bs = make([]float64, samples[0])
	}
	if n == nil {
		ns = make([]float64, samples[1])
	}
	row.Delta = CompareSamples(bs, ns, alpha)
	if b != nil && n != nil && perStepUntestable(len(bs), len(ns), alpha) {
		row.Occurrences = compareOccurrences(b.occ, n.occ, alpha)
	}
	switch {
	case b == nil:
		row.Status = Added
	case n == nil:
		row.Status = Removed
	default:
		row.Status = judge(&row.Delta)
	}
	return row
}

// judge is the status of a row present in both runs: the U test's verdict
// when it can reach α, else the medians' change against UntestedChangePct.
func judge(d *Delta) Status {
	switch {
	case d.Significant:
		return Changed
	case !d.Testable():
		if math.Abs(d.Pct) > UntestedChangePct {
			return ChangedUntested
		}
		return Untested
	}
	return Same
}

// sortRows puts the heaviest rows first: by the larger of the two per-step
// medians, then by name, so output is deterministic.
func sortRows(rows []Row) {
	slices.SortStableFunc(rows, func(a, b Row) int {
		wa := max(a.Base.Median, a.New.Median)
		wb := max(b.Base.Median, b.New.Median)
		if c := cmp.Compare(wb, wa); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
}

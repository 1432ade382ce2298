package distributed

import (
	"fmt"
	"github.com/tracelens/tracelens/interval"
	"math"
	"slices"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/diff"
	"github.com/tracelens/tracelens/trace"
)

// `tracelens diff RUN_A RUN_B` compares two runs as runs: every rank's
// step time and communication per step, each rank's lateness (what it
// makes the others wait), its peer wait (what it loses to the others) and
// its transfer, and the run's cross-rank findings new, resolved and
// persisting. A waiting rank's NCCL kernels spin: that time is peer wait,
// never GPU work, so a balanced run against a straggler run reads as a
// new straggler, not as "GPU busy +90 %".

// StepFigures are one rank's figures of one step; a collective counts in
// the step its kernel started in on that rank.
type StepFigures struct {
	StepComm
	// PeerWait is the part of Wait no compute kernel of the rank hid;
	// Transfer the matched collectives' shortest duration across ranks
	// (the data moving); ExposedTransfer exposed communication that is
	// not waiting; Late the rank's arrival after the median of the others
	// at the collectives it reached last (by more than 50 µs).
	PeerWait        trace.Duration
	Transfer        trace.Duration
	ExposedTransfer trace.Duration
	Late            trace.Duration
}

// StepFigures returns rank index ri's figures per step, in step order.
func (run *Run) StepFigures(ri int) []StepFigures {
	r := run.Ranks[ri]
	comm := run.PerStep(ri)
	out := make([]StepFigures, len(comm))
	for i := range comm {
		out[i].StepComm = comm[i]
	}
	late := make([]lateTally, len(out))
	waits := make([][]trace.Span, len(out))
	for ci := range run.Collectives {
		c := &run.Collectives[ci]
		last, isLate := c.lateArrival()
		for i, p := range c.Participants {
			if p != ri {
				continue
			}
			rc := &r.Collectives[c.Calls[i]]
			st := stepOf(r.Steps, rc.Start)
			if st < 0 {
				continue
			}
			f := &out[st]
			if w, ok := run.waitSpan(c, i); ok {
				waits[st] = append(waits[st], w)
			}
			f.Transfer += c.Transfer()
			f.ExposedTransfer += max(rc.Exposed-c.Wait(i), 0)
			if i == last && isLate {
				late[st].add(run, c, last)
			}
		}
	}
	compute := run.ownUnion(ri, under)
	for i := range out {
		out[i].Late = late[i].total()
		// Waits that overlap in time count once, as in the rank's
		// ledger.
		out[i].PeerWait = outside(interval.Union(interval.NonEmpty(waits[i])), compute)
	}
	return out
}

// Run-diff metric names (RankDelta.Metric), per rank per step.
const (
	MetricStepWall        = "step_wall_us"
	MetricCommKernel      = "comm_kernel_us"
	MetricExposedComm     = "exposed_comm_us"
	MetricLate            = "late_us"
	MetricPeerWait        = "peer_wait_us"
	MetricTransfer        = "transfer_us"
	MetricExposedTransfer = "exposed_transfer_us"
)

// runMetrics are the per-step figures a run diff compares, in order.
var runMetrics = []struct {
	name string
	get  func(StepFigures) trace.Duration
}{
	{MetricStepWall, func(s StepFigures) trace.Duration { return s.Wall }},
	{MetricLate, func(s StepFigures) trace.Duration { return s.Late }},
	{MetricPeerWait, func(s StepFigures) trace.Duration { return s.PeerWait }},
	{MetricTransfer, func(s StepFigures) trace.Duration { return s.Transfer }},
	{MetricExposedTransfer, func(s StepFigures) trace.Duration { return s.ExposedTransfer }},
	{MetricExposedComm, func(s StepFigures) trace.Duration { return s.Exposed }},
	{MetricCommKernel, func(s StepFigures) trace.Duration { return s.CommKernel }},
}

// RankDelta is one per-step metric of one rank ("all": every rank's steps
// pooled) compared between two runs, in microseconds.
type RankDelta struct {
	Metric string `json:"metric"`
	Rank   string `json:"rank"`
	// BaseUs and NewUs are the medians; Pct the change (0 from a zero
	// base: JSON has no NaN, the medians say it).
	BaseUs      float64    `json:"base_median_us"`
	NewUs       float64    `json:"new_median_us"`
	Pct         float64    `json:"delta_pct"`
	P           float64    `json:"p"`
	Significant bool       `json:"significant"`
	Note        string     `json:"note,omitempty"`
	Delta       diff.Delta `json:"-"`
}

// rankDelta is the row of metric for rank from d.
func rankDelta(metric, rank string, d diff.Delta) RankDelta {
	r := RankDelta{Metric: metric, Rank: rank, BaseUs: d.Base.Median, NewUs: d.New.Median, Pct: d.Pct, P: d.P,
		Significant: d.Significant, Note: d.Note, Delta: d}
	if math.IsNaN(r.Pct) {
		r.Pct = 0
	}
	return r
}

// RunFindingChange is one cross-rank finding (id and subject) and its
// saving per step in each run (0 where absent).
type RunFindingChange struct {
	ID           string  `json:"id"`
	Subject      string  `json:"subject"`
	Title        string  `json:"title"`
	Ranks        []int   `json:"ranks"`
	BaseSavingUs float64 `json:"base_saving_us"`
	NewSavingUs  float64 `json:"new_saving_us"`
}

// RunDiff is the comparison of two runs.
type RunDiff struct {
	Alpha float64 `json:"alpha"`
	// Ranks are the global ranks in both runs; OnlyBase and OnlyNew those
	// in one.
	Ranks    []int `json:"ranks"`
	OnlyBase []int `json:"only_base_ranks"`
	OnlyNew  []int `json:"only_new_ranks"`
	// Rows has every metric per rank, then pooled over ranks ("all").
	Rows []RankDelta `json:"rows"`
	// New, Resolved and Persisting sort the cross-rank findings.
	New        []RunFindingChange `json:"new_findings"`
	Resolved   []RunFindingChange `json:"resolved_findings"`
	Persisting []RunFindingChange `json:"persisting_findings"`
}

// CompareRuns compares two runs rank by rank, per step, with diff's test
// (Mann–Whitney U; the first step dropped unless opt.KeepWarmup), and
// their cross-rank findings (Analyze's, before or after Combine) by id
// and subject.
func CompareRuns(base, next *Run, baseRes, newRes *Result, opt diff.Options) *RunDiff {
	d := &RunDiff{Alpha: opt.Alpha}
	if d.Alpha == 0 {
		d.Alpha = diff.DefaultAlpha
	}
	pooled := make([][2][]float64, len(runMetrics))
	for ia, ra := range base.Ranks {
		ib := next.RankIndex(ra.Rank)
		if ib < 0 {
			d.OnlyBase = append(d.OnlyBase, ra.Rank)
			continue
		}
		d.Ranks = append(d.Ranks, ra.Rank)
		sa, sb := base.StepFigures(ia), next.StepFigures(ib)
		if !opt.KeepWarmup {
			sa, sb = sa[min(1, len(sa)):], sb[min(1, len(sb)):]
		}
		for m, metric := range runMetrics {
			x, y := figureSamples(sa, metric.get), figureSamples(sb, metric.get)
			pooled[m][0] = append(pooled[m][0], x...)
			pooled[m][1] = append(pooled[m][1], y...)
			d.Rows = append(d.Rows, rankDelta(metric.name, fmt.Sprint(ra.Rank), diff.CompareSamples(x, y, d.Alpha)))
		}
	}
	for _, rb := range next.Ranks {
		if base.RankIndex(rb.Rank) < 0 {
			d.OnlyNew = append(d.OnlyNew, rb.Rank)
		}
	}
	for m, metric := range runMetrics {
		d.Rows = append(d.Rows, rankDelta(metric.name, "all", diff.CompareSamples(pooled[m][0], pooled[m][1], d.Alpha)))
	}
	d.compareFindings(crossRankOf(baseRes), crossRankOf(newRes))
	return d
}

func figureSamples(steps []StepFigures, get func(StepFigures) trace.Duration) []float64 {
	out := make([]float64, len(steps))
	for i, s := range steps {
		out[i] = get(s).Micros()
	}
	return out
}

// crossRankOf is res's cross-rank findings (none for a nil res).
func crossRankOf(res *Result) []Finding {
	if res == nil {
		return nil
	}
	var out []Finding
	for _, f := range res.Findings {
		if f.CrossRank() {
			out = append(out, f)
		}
	}
	return out
}

// compareFindings sorts the two runs' cross-rank findings by id and
// subject (a straggler is "rank N": another rank late is a new straggler).
func (d *RunDiff) compareFindings(base, next []Finding) {
	key := func(f *Finding) string { return f.ID + "\x00" + f.Subject }
	in := map[string]*RunFindingChange{}
	var order []string
	add := func(f *Finding, isNew bool) {
		k := key(f)
		c := in[k]
		if c == nil {
			c = &RunFindingChange{ID: f.ID, Subject: f.Subject, Title: f.Title, Ranks: f.Ranks}
			in[k] = c
			order = append(order, k)
		}
		if isNew {
			c.NewSavingUs += f.SavingUs
			c.Title, c.Ranks = f.Title, f.Ranks
		} else {
			c.BaseSavingUs += f.SavingUs
		}
	}
	baseKeys := map[string]bool{}
	for i := range base {
		add(&base[i], false)
		baseKeys[key(&base[i])] = true
	}
	newKeys := map[string]bool{}
	for i := range next {
		add(&next[i], true)
		newKeys[key(&next[i])] = true
	}
	for _, k := range order {
		switch c := *in[k]; {
		case baseKeys[k] && newKeys[k]:
			d.Persisting = append(d.Persisting, c)
		case newKeys[k]:
			d.New = append(d.New, c)
		default:
			d.Resolved = append(d.Resolved, c)
		}
	}
}

// Row returns the row of metric for rank ("all": pooled), or nil.
func (d *RunDiff) Row(metric, rank string) *RankDelta {
	i := slices.IndexFunc(d.Rows, func(r RankDelta) bool { return r.Metric == metric && r.Rank == rank })
	if i < 0 {
		return nil
	}
	return &d.Rows[i]
}

// Gate lists what makes a run diff a regression: a new straggler (a rank
// the others wait for that did not make them wait before), a new
// exposed-communication finding, and exposed communication that is not
// waiting (the pooled per-rank exposed transfer per step) growing by more
// than thresholdPct percent, significantly or, with too few steps for the
// U test, by the medians (listed in untested too).
func (d *RunDiff) Gate(thresholdPct float64) (failures, untested []string) {
	for _, f := range d.New {
		switch f.ID {
		case IDStraggler:
			failures = append(failures, fmt.Sprintf("new straggler %s: %s (%s per step)", f.Subject, f.Title, diff.FormatTime(f.NewSavingUs)))
		case IDExposedComm:
			failures = append(failures, fmt.Sprintf("new exposed communication in %s: %s", f.Subject, f.Title))
		}
	}
	m := d.Row(MetricExposedTransfer, "all")
	if m == nil || !(m.Delta.Pct > thresholdPct) {
		return failures, untested
	}
	what := fmt.Sprintf("exposed communication (not waiting) per rank per step %s → %s (%s, p=%.3f n=%d+%d)",
		diff.FormatTime(m.BaseUs), diff.FormatTime(m.NewUs), diff.FormatPct(m.Pct), m.P, len(m.Delta.Base.Values), len(m.Delta.New.Values))
	switch {
	case m.Significant:
		failures = append(failures, fmt.Sprintf("grew more than %g%%: %s", thresholdPct, what))
	case m.Note != "":
		msg := fmt.Sprintf("grew more than %g%% by the medians; significance could not be tested (%s): %s", thresholdPct, m.Note, what)
		failures = append(failures, msg)
		untested = append(untested, msg)
	}
	return failures, untested
}

// PeerWaitKey is the key of the per-step peer wait metric AddPeerWait
// adds to a rank diff's summary.
const PeerWaitKey = "peer_wait_us"

// AddPeerWait appends to a rank diff's summary the per-step peer wait of
// the two ranks compared (their peer_wait ledger lines; the first step
// left out unless keepWarmup, as diff does).
func AddPeerWait(d *diff.Result, base, next *analyze.Result, keepWarmup bool) {
	samples := func(a *analyze.Result) []float64 {
		first := 0
		if !keepWarmup && len(a.Steps) > 1 {
			first = 1
		}
		var v []float64
		for _, s := range a.Steps[first:] {
			v = append(v, analyze.LedgerUs(s.Ledger, analyze.LinePeerWait))
		}
		return v
	}
	d.Summary = append(d.Summary, diff.Metric{Key: PeerWaitKey, Name: "peer wait (spinning)", Time: true,
		Delta: diff.CompareSamples(samples(base), samples(next), d.Alpha)})
}

package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/distributed"
	"github.com/tracelens/tracelens/jsonout"
	"github.com/tracelens/tracelens/trace"
)

// The "Ranks" section of a multi-rank run's report: the per-rank table,
// a wait/skew chart, the straggler explanation and the run's findings.
// The rest of the report describes one rank (Input.Rank).

func usd(us float64) string { return trace.Duration(us * 1e3).String() }

// ranks writes the section for run (nil: nothing).
func (d *doc) ranks(x Input) {
	run := x.Run
	if run == nil {
		return
	}
	d.heading(2, "Ranks")
	missing := "none missing"
	if len(run.Missing) > 0 {
		missing = fmt.Sprintf("missing %s", Text(fmt.Sprint(run.Missing)))
	}
	clock := "clocks agree (offsets within noise, not corrected)"
	if run.ClockCorrected {
		clock = "clock offsets estimated from collective end times and removed before computing skew and wait"
	}
	d.para("%s of world size %d (%s); %d collectives matched across ranks; %s. The sections after this one describe rank %d.",
		plural(len(run.Ranks), "rank"), run.WorldSize, missing, run.Collectives, clock, x.Rank)
	tb := newTable(right("rank"), right("median step"), right("GPU busy"), right("spinning"), right("comm kernels"), right("overlap"), right("exposed"),
		right("wait"), right("transfer"), right("start skew"), right("late arrivals"), right("clock offset"))
	for _, r := range run.Ranks {
		tb.add(fmt.Sprint(r.Rank), usd(r.StepMedianUs), RankBusy(r), fmt.Sprintf("%.1f%%", 100*r.GPUSpinShare), usd(r.CommKernelUs), fmt.Sprintf("%.0f%%", 100*r.OverlapShare), usd(r.ExposedCommUs),
			usd(r.WaitUs), usd(r.TransferUs), usd(r.StartSkewUs), fmt.Sprint(r.LastArrivals), usd(r.ClockOffsetUs)+" ± "+usd(r.ClockResidualUs))
	}
	d.table(tb)
	d.para("*GPU busy*: the rank's own GPU work (kernels, copies) over its GPU window, share and time; *spinning*: the time its communication kernels only waited for a later rank, counted as waiting, not as busy; *comm kernels*: communication kernel time; *overlap*: its share under compute kernels; *exposed*: with no compute kernel on any stream; *wait*: time in collectives waiting for later ranks (latest arrival minus own); *transfer*: the shortest duration of each collective across ranks; *start skew*: mean arrival after the earliest rank; *late arrivals*: collectives this rank reached last.")
	d.chart(waitMermaid(run.Ranks), func() string { return waitSVG(run.Ranks) })
	if len(run.Dimensions) > 0 {
		dt := newTable(left("dimension"), left("groups"), left("kinds"), right("collectives"), right("comm kernels"), right("exposed"), right("of which waiting"), right("bytes"))
		for _, dim := range run.Dimensions {
			dt.add(Text(dim.Dimension), Text(strings.Join(dim.Groups, ", ")), Text(strings.ReplaceAll(strings.Join(dim.Kinds, ", "), "_", "-")),
				fmt.Sprint(dim.Collectives), usd(dim.CommKernelUs), usd(dim.ExposedCommUs), usd(dim.ExposedWaitUs), fmt.Sprintf("%.1f GiB", float64(dim.Bytes)/(1<<30)))
		}
		d.table(dt)
	}
	if s := run.Straggler; s != nil {
		d.heading(3, "Straggler")
		d.para("%s.", upperFirst(Text(s.Sentence)))
	}
	if !combined(run) {
		if len(run.Findings) == 0 {
			d.para("No cross-rank finding: no rank makes the others wait, and communication is hidden or cheap.")
		}
		for i, f := range run.Findings {
			d.finding(fmt.Sprintf("R%d", i+1), f.Finding)
		}
	} else if n := crossRankCount(run); n == 0 {
		d.para("No cross-rank finding: no rank makes the others wait, and communication is hidden or cheap.")
	} else {
		if n == 1 {
			d.para("The run's cross-rank finding is ranked with rank %d's own under *Findings*, by saving.", x.Rank)
		} else {
			d.para("The run's %d cross-rank findings are ranked with rank %d's own under *Findings*, by saving.", n, x.Rank)
		}
	}
	var notes []string
	for _, u := range run.Unmatched {
		notes = append(notes, fmt.Sprintf("rank %d, group %s: %s unmatched (%s)", u.Rank, Code(u.Group), plural(u.Count, "communication kernel"), Text(u.Reason)))
	}
	for _, w := range run.Warnings {
		notes = append(notes, Text(w))
	}
	for _, n := range notes {
		d.b.WriteString("- " + n + "\n")
	}
	if len(notes) > 0 {
		d.b.WriteString("\n")
	}
}

// RankBusy is how every face words a rank's GPU busy time: its share of
// the rank's GPU window and the time, spinning left out
// (distributed.RankRow.GPUBusyUs), e.g. "67.9% (73.9ms)".
func RankBusy(r distributed.RankRow) string {
	return fmt.Sprintf("%.1f%% (%s)", 100*r.GPUBusyShare, usd(r.GPUBusyUs))
}

// waitMermaid is the wait/skew chart as a mermaid bar chart (Markdown).
func waitMermaid(rows []distributed.RankRow) string {
	if len(rows) == 0 {
		return ""
	}
	var xs, wait, skew []string
	maxV := 0.0
	for _, r := range rows {
		xs = append(xs, fmt.Sprintf(`"%d"`, r.Rank))
		wait = append(wait, sig(r.WaitUs/1000))
		skew = append(skew, sig(r.StartSkewUs/1000))
		maxV = max(maxV, r.WaitUs/1000, r.StartSkewUs/1000)
	}
	var b strings.Builder
	b.WriteString("xychart-beta\n    title \"Wait in collectives per rank (bars) and mean start skew (line), ms\"\n")
	fmt.Fprintf(&b, "    x-axis [%s]\n", strings.Join(xs, ", "))
	fmt.Fprintf(&b, "    y-axis \"ms\" 0 --> %s\n", sig(maxV*1.1+1e-3))
	fmt.Fprintf(&b, "    bar [%s]\n", strings.Join(wait, ", "))
	fmt.Fprintf(&b, "    line [%s]\n", strings.Join(skew, ", "))
	return b.String()
}

// waitSVG draws, per rank, its wait in collectives (bar) and its mean
// start skew (thin bar below), on one scale: the straggler is the rank
// with no wait and the largest skew.
func waitSVG(rows []distributed.RankRow) string {
	if len(rows) == 0 {
		return ""
	}
	const width, labelW, textW, rowH, top = 960, 90, 200, 26, 30
	h := top + rowH*len(rows) + 8
	var b strings.Builder
	title := "Wait in collectives (bar) and mean start skew (thin bar) per rank"
	fmt.Fprintf(&b, `<svg class="chart" role="img" viewBox="0 0 %d %d" width="%d" height="%d">`, width, h, width, h)
	fmt.Fprintf(&b, `<title>%s</title><text class="title" x="0" y="18">%s</text>`, esc(title), esc(title))
	maxV := 0.0
	for _, r := range rows {
		maxV = max(maxV, r.WaitUs, r.StartSkewUs)
	}
	span := float64(width - labelW - textW)
	scale := func(v float64) float64 {
		if maxV <= 0 {
			return 1
		}
		return max(v/maxV*span, 1)
	}
	for i, r := range rows {
		y := top + i*rowH
		label := fmt.Sprintf("rank %d", r.Rank)
		ww, sw := scale(r.WaitUs), scale(r.StartSkewUs)
		fmt.Fprintf(&b, `<text class="label" x="%d" y="%d" text-anchor="end">%s</text>`, labelW-8, y+14, esc(label))
		fmt.Fprintf(&b, `<rect class="c-communication" x="%d" y="%d" width="%.1f" height="%d"><title>%s waits %s</title></rect>`, labelW, y+2, ww, 13, esc(label), esc(usd(r.WaitUs)))
		fmt.Fprintf(&b, `<rect class="c-host" x="%d" y="%d" width="%.1f" height="%d"><title>%s arrives %s after the earliest rank on average</title></rect>`, labelW, y+17, sw, 5, esc(label), esc(usd(r.StartSkewUs)))
		fmt.Fprintf(&b, `<text class="value" x="%.1f" y="%d">wait %s · skew %s</text>`, float64(labelW)+max(ww, sw)+6, y+14, esc(usd(r.WaitUs)), esc(usd(r.StartSkewUs)))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// runJSON is the report's JSON for a multi-rank run: the described rank's
// analyze.Result, the run's per-rank rows under "ranks", the rest of the
// run's analysis under "distributed", and every finding (the run's and
// the rank's) with the ranks it concerns. See docs/distributed-json.md.
type runJSON struct {
	*analyze.Result
	Run         string                `json:"run"`
	Rank        int                   `json:"rank"`
	Ranks       []distributed.RankRow `json:"ranks"`
	Distributed *distributed.Result   `json:"distributed"`
	Findings    []distributed.Finding `json:"findings"`
}

func writeRunJSON(w io.Writer, x Input) error {
	run := *x.Run
	out := runJSON{Result: x.Result, Run: x.RunName, Rank: x.Rank, Ranks: run.Ranks, Distributed: &run}
	out.Findings = append(out.Findings, run.Findings...)
	if !combined(x.Run) {
		for _, f := range x.Result.Findings {
			out.Findings = append(out.Findings, distributed.Finding{Finding: f, Ranks: []int{x.Rank}})
		}
	}
	run.Ranks, run.Findings = nil, nil
	return jsonout.Write(w, out)
}

// combined reports whether run's findings are the run's one ranking
// (distributed.Combine): the cross-rank findings with the described
// rank's own.
func combined(run *distributed.Result) bool {
	for _, f := range run.Findings {
		if len(f.Ranks) > 0 && f.Finding.Ranks != nil {
			return true
		}
	}
	return run.CombinedSavingUs > 0
}

// crossRankCount counts the run's cross-rank findings in its ranking.
func crossRankCount(run *distributed.Result) int {
	n := 0
	for i := range run.Findings {
		if run.Findings[i].CrossRank() {
			n++
		}
	}
	return n
}

// runTitle names a run's report: its directory and rank count.
func runTitle(x Input) string {
	name := x.RunName
	if name == "" {
		name = "of " + plural(len(x.Run.Ranks), "rank")
	}
	return name
}

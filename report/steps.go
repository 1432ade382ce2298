package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/trace"
)

// steps is the step breakdown: the per-step table, the phases and busy
// split, how the steps spread, the ledger and the timeline.
func (d *doc) steps(t *trace.Trace, r *analyze.Result) {
	d.heading(2, "Step breakdown")
	if len(r.Steps) == 0 {
		d.para("The trace has no timed events, so there is no step to break down.")
		return
	}
	if r.Summary.StepsSynthetic {
		d.para("The trace marks no `ProfilerStep#N` ranges, so the whole trace (%s) counts as one step.", us(r.Summary.WallUs))
	} else if src := stepSource(r); src != "" {
		d.para("The trace marks no `ProfilerStep#N` ranges; %s.", src)
	}
	gpu := hasGPU(r)
	steps := r.Steps
	d.table(stepTable(r, gpu))
	d.phases(r)
	d.busySplit(r)
	if len(steps) >= 2 {
		d.para("%s", spreadLine(r))
		d.chart(stepsMermaid(steps, gpu), func() string { return stepsSVG(steps) })
	}
	d.stepsLedger(r)
	if gpu {
		cat := map[string]string{}
		for _, k := range r.Kernels {
			cat[k.Name] = k.Category
		}
		d.chart("", func() string { return timelineSVG(t, cat) })
	}
}

// stepTable is the step breakdown's table: one row per step (the first 8
// and last 3 of a long trace), then the medians; only the wall time for a
// CPU-only trace, whose GPU columns would be all zeros.
func stepTable(r *analyze.Result, gpu bool) *table {
	cols := []column{left("Step"), right("Wall"), right("GPU busy"), right("GPU idle"), right("Busy"), right("Kernels"), right("Launches"), right("Launch CPU"), right("Sync")}
	if !gpu {
		cols = cols[:2]
	}
	tb := newTable(cols...)
	row := func(name string, s analyze.Step) {
		if !gpu {
			tb.add(name, us(s.WallUs))
			return
		}
		tb.add(name, us(s.WallUs), us(s.GPUBusyUs), us(s.GPUIdleUs), pct(s.GPUBusyShare), count(float64(s.Kernels)), count(float64(s.Launches)), us(s.LaunchAPIUs), us(s.SyncUs))
	}
	steps := r.Steps
	const maxRows = 12
	for i, s := range steps {
		if len(steps) > maxRows && i == 8 {
			tb.add(fmt.Sprintf("… %d more", len(steps)-11), "", "", "", "", "", "", "", "")
		}
		if len(steps) > maxRows && i >= 8 && i < len(steps)-3 {
			continue
		}
		name := fmt.Sprintf("#%d", s.Number)
		if s.Synthetic {
			name = "whole trace"
		}
		row(name, s)
	}
	if len(steps) >= 2 {
		row("**median**", r.StepStats.Median)
	}
	if len(steps) >= 3 {
		row("**median excl. first**", r.StepStats.MedianNoFirst)
	}
	return tb
}

// spreadLine says how far the steps' wall times spread and what the first
// step is (a cold start, warm-up or nothing notable).
func spreadLine(r *analyze.Result) string {
	ss := r.StepStats
	line := fmt.Sprintf("Every step takes %s.", us(ss.MinWallUs))
	if ss.MaxWallUs > ss.MinWallUs {
		line = fmt.Sprintf("Wall time ranges from %s (#%d) to %s (#%d)", us(ss.MinWallUs), ss.MinWallStep, us(ss.MaxWallUs), ss.MaxWallStep)
		switch {
		case ss.MedianWallUs > 0 && ss.WallSpread >= 2:
			// "86146% of the median" reads as noise; a factor does not.
			line += fmt.Sprintf(", a spread of %.1f× the median", ss.WallSpread)
		case ss.MedianWallUs > 0:
			line += fmt.Sprintf(", a spread of %s of the median", pct(ss.WallSpread))
		}
		line += "."
	}
	if ss.FirstStepRatio > 0 {
		if n := coldStartFinding(r); n != "" && ss.WarmUp {
			line += fmt.Sprintf(" The first step is %.2f× the median of the others: a cold start, excluded from the medians the summary quotes (finding %s).", ss.FirstStepRatio, n)
		} else if ss.WarmUp {
			line += fmt.Sprintf(" The first step is %.2f× the median of the others: warm-up, excluded from the medians the summary quotes.", ss.FirstStepRatio)
		} else {
			line += fmt.Sprintf(" The first step is %.2f× the median of the others: no notable warm-up.", ss.FirstStepRatio)
		}
	}
	return line
}

// categoryTimes is the GPU time by kernel category: a table and its pie
// (or bar) chart.
func (d *doc) categoryTimes(r *analyze.Result) {
	d.heading(3, "GPU time by kernel category")
	if len(r.Categories) == 0 {
		d.para("No GPU activity: nothing to break down.")
	} else {
		tb := newTable(left("Category"), right("Activities"), right("GPU time"), right("Share"))
		var pie strings.Builder
		pie.WriteString("pie showData title GPU time by kernel category (µs)\n")
		var bars []bar
		for _, c := range r.Categories {
			tb.add(categoryTitle(c.Category), count(float64(c.Count)), us(c.TotalUs), pct(c.Share))
			if c.TotalUs > 0 {
				fmt.Fprintf(&pie, "    \"%s\" : %s\n", mermaidLabel(categoryTitle(c.Category)), sig(c.TotalUs))
				bars = append(bars, bar{label: categoryTitle(c.Category), value: c.TotalUs, text: us(c.TotalUs) + " · " + pct(c.Share), class: categoryClass(c.Category)})
			}
		}
		d.table(tb)
		if len(bars) == 0 {
			pie.Reset()
		}
		d.chart(pie.String(), func() string { return barsSVG("GPU time by kernel category", bars) })
	}
}

// annotationTimes is the time by named range and nn.Module (the 15 with
// the most GPU time), or how to add ranges when the trace has none.
func (d *doc) annotationTimes(r *analyze.Result, gpu bool) {
	d.heading(3, "Time by annotation and module")
	if len(r.Annotations) == 0 {
		hint := "wrap regions in `torch.profiler.record_function(\"name\")`"
		if !torch(r) {
			hint = "wrap regions in a named range (`jax.profiler.TraceAnnotation` in JAX)"
		}
		d.para("No named ranges or `nn.Module` frames in this trace: %s to see their time here.", hint)
	} else {
		anns := slices.Clone(r.Annotations)
		slices.SortStableFunc(anns, func(a, b analyze.AnnotationStat) int {
			if a.GPUUs != b.GPUUs {
				return cmpDesc(a.GPUUs, b.GPUUs)
			}
			return cmpDesc(a.CPUUs, b.CPUUs)
		})
		cols := []column{left("Range or module"), left("Kind"), right("Count"), right("CPU time"), right("GPU time"), right("Kernels")}
		if !gpu {
			cols = cols[:4]
		}
		tb := newTable(cols...)
		const maxRows = 15
		for i, a := range anns {
			if i == maxRows {
				break
			}
			cells := []string{Code(a.Name), Text(a.Kind), count(float64(a.Count)), us(a.CPUUs), us(a.GPUUs), count(float64(a.Kernels))}
			tb.add(cells[:len(cols)]...)
		}
		d.table(tb)
		if len(anns) > maxRows {
			d.para("%d more in the JSON report.", len(anns)-maxRows)
		}
	}
}

// stepsMermaid is an xychart-beta of step wall time (bars) and GPU busy
// time (line), in ms or µs; the step table above it has the same numbers.
func stepsMermaid(steps []analyze.Step, gpu bool) string {
	maxV := 0.0
	for _, s := range steps {
		maxV = max(maxV, s.WallUs)
	}
	unit, div := "µs", 1.0
	if maxV >= 1000 {
		unit, div = "ms", 1000
	}
	var xs, bars, line []string
	for _, s := range steps {
		xs = append(xs, fmt.Sprintf(`"#%d"`, s.Number))
		bars = append(bars, sig(s.WallUs/div))
		line = append(line, sig(s.GPUBusyUs/div))
	}
	var b strings.Builder
	if gpu {
		fmt.Fprintf(&b, "xychart-beta\n    title \"Step wall time (bars) and GPU busy time (line), %s\"\n", unit)
	} else {
		fmt.Fprintf(&b, "xychart-beta\n    title \"Step wall time, %s\"\n", unit)
	}
	fmt.Fprintf(&b, "    x-axis [%s]\n", strings.Join(xs, ", "))
	fmt.Fprintf(&b, "    y-axis \"%s\" 0 --> %s\n", unit, sig(maxV/div*1.1))
	fmt.Fprintf(&b, "    bar [%s]\n", strings.Join(bars, ", "))
	if gpu {
		fmt.Fprintf(&b, "    line [%s]\n", strings.Join(line, ", "))
	}
	return b.String()
}

func (d *doc) timeBreakdown(r *analyze.Result) {
	gpu := hasGPU(r)
	d.heading(2, "Where the time goes")
	d.categoryTimes(r)
	d.annotationTimes(r, gpu)

	d.heading(3, "Time by framework op")
	if len(r.Ops) == 0 {
		d.para("No framework ops (`cpu_op` events) in this trace.")
		return
	}
	cols := []column{left("Op"), right("Calls"), right("CPU total"), right("CPU self"), right("GPU time"), right("Kernels")}
	if !gpu {
		cols = cols[:4]
	}
	tb := newTable(cols...)
	const maxOps = 10
	for i, o := range r.Ops {
		if i == maxOps {
			break
		}
		cells := []string{Code(o.Name), count(float64(o.Calls)), us(o.TotalCPUUs), us(o.SelfCPUUs), us(o.GPUUs), count(float64(o.Kernels))}
		tb.add(cells[:len(cols)]...)
	}
	d.table(tb)
	if len(r.Ops) > maxOps {
		d.para("%d more ops in the JSON report.", len(r.Ops)-maxOps)
	}
}

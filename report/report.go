package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/distributed"
	"github.com/tracelens/tracelens/trace"
)

// Input is one trace and what analyze computed about it.
type Input struct {
	Trace  *trace.Trace
	Result *analyze.Result
	// Run, for one rank of a multi-rank run, is the run's analysis and
	// Rank the rank Trace is (see ranks.go).
	Run  *distributed.Result
	Rank int
}

// Options tune what the report shows.
type Options struct {
	// TopKernels is the number of rows of the top-kernels table; 0 means
	// DefaultTopKernels.
	TopKernels int
}

// DefaultTopKernels is how many kernels the report lists unless told.
const DefaultTopKernels = 10

// Markdown writes the report for in (one trace, or several with a
// comparison table first) as GitHub-flavoured Markdown.
func Markdown(w io.Writer, in []Input, opt Options) error {
	d, err := build(in, opt, false)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, d.b.String())
	return err
}

// HTML writes the same report as one self-contained HTML page: the
// Markdown rendered by goldmark, inline CSS and SVG charts in place of the
// mermaid blocks, plus a timeline, kernel-share and roofline chart.
func HTML(w io.Writer, in []Input, opt Options) error {
	d, err := build(in, opt, true)
	if err != nil {
		return err
	}
	return writeHTML(w, d.title, d.b.String(), d.charts)
}

// JSON writes analyze's Result, the machine contract of the report: the
// Result object for one trace, an array of them for several.
func JSON(w io.Writer, in []Input) error {
	if err := check(in); err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if len(in) == 1 && in[0].Run != nil {
		return writeRunJSON(w, in[0])
	}
	if len(in) == 1 {
		return enc.Encode(in[0].Result)
	}
	rs := make([]*analyze.Result, len(in))
	for i := range in {
		rs[i] = in[i].Result
	}
	return enc.Encode(rs)
}

func check(in []Input) error {
	if len(in) == 0 {
		return errors.New("report: no traces")
	}
	for i, x := range in {
		if x.Trace == nil || x.Result == nil {
			return fmt.Errorf("report: input %d has no trace or no analysis", i)
		}
	}
	return nil
}

// doc accumulates the Markdown of a report. In HTML mode chart blocks
// become placeholders resolved to SVG by writeHTML; otherwise they are
// mermaid blocks (or nothing, for charts only the HTML report draws).
type doc struct {
	b      strings.Builder
	html   bool
	charts map[string]string
	// depth is added to every heading level: 1 when several traces share
	// one document under a comparison.
	depth int
	title string
	opt   Options
	// result is the trace being written (single sets it).
	result *analyze.Result
	err    error
}

func build(in []Input, opt Options, html bool) (*doc, error) {
	if err := check(in); err != nil {
		return nil, err
	}
	if opt.TopKernels <= 0 {
		opt.TopKernels = DefaultTopKernels
	}
	d := &doc{html: html, charts: map[string]string{}, opt: opt}
	if len(in) == 1 {
		d.title = "Performance report: " + workload(in[0].Result.Source)
		d.single(in[0])
	} else {
		d.title = fmt.Sprintf("Performance report: %d traces", len(in))
		d.heading(1, Text(d.title))
		d.comparison(in)
		d.depth = 1
		for _, x := range in {
			d.single(x)
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	return d, nil
}

func (d *doc) heading(level int, text string) {
	fmt.Fprintf(&d.b, "%s %s\n\n", strings.Repeat("#", min(level+d.depth, 6)), text)
}

func (d *doc) para(format string, a ...any) {
	fmt.Fprintf(&d.b, format, a...)
	d.b.WriteString("\n\n")
}

func (d *doc) table(t *table) {
	if err := t.write(&d.b); err != nil && d.err == nil {
		d.err = err
	}
}

// chart places a chart: mermaid source in Markdown, the SVG from svg in
// HTML. Either may be empty when that form does not exist.
func (d *doc) chart(mermaid string, svg func() string) {
	if !d.html {
		if mermaid != "" {
			fmt.Fprintf(&d.b, "```mermaid\n%s```\n\n", mermaid)
		}
		return
	}
	s := svg()
	if s == "" {
		return
	}
	id := fmt.Sprintf("chart-%d", len(d.charts)+1)
	d.charts[id] = s
	fmt.Fprintf(&d.b, "```%s\n%s\n```\n\n", chartLang, id)
}

// single writes the whole report of one trace.
func (d *doc) single(x Input) {
	t, r := x.Trace, x.Result
	d.result = r
	d.heading(1, "Performance report: "+Code(workload(r.Source)))
	d.header(t, r)
	d.heading(2, "Executive summary")
	d.summary(t, r)
	d.ranks(x)
	d.steps(t, r)
	d.timeBreakdown(r)
	d.kernels(r)
	d.findings(r)
	d.roofline(r)
	d.nextSteps(r)
	d.appendix(t, r)
}

// workload names a trace after its file, without directories and the
// profiler's extensions.
func workload(source string) string {
	base := path.Base(strings.ReplaceAll(source, "\\", "/"))
	base = strings.TrimPrefix(base, "embedded:")
	for _, ext := range []string{".gz", ".json", ".perfetto", ".pt.trace", ".trace"} {
		base = strings.TrimSuffix(base, ext)
	}
	if base == "" || base == "." || base == "/" {
		return source
	}
	return base
}

func (d *doc) header(t *trace.Trace, r *analyze.Result) {
	var parts []string
	parts = append(parts, "**Trace** "+Code(r.Source))
	if len(t.Meta.Devices) == 0 {
		dev := "not recorded"
		if r.Device != "" {
			dev = Code(r.Device)
		}
		parts = append(parts, "**Device** "+dev)
	}
	for _, dv := range t.Meta.Devices {
		parts = append(parts, fmt.Sprintf("**Device %d** %s (%d SMs, compute capability %d.%d, %.0f GiB)",
			dv.ID, Text(dv.Name), dv.NumSMs, dv.ComputeMajor, dv.ComputeMinor, float64(dv.TotalGlobalMem)/(1<<30)))
	}
	fw := r.Framework
	if fw == "" {
		fw = "unknown framework"
	}
	fwText := Text(fw)
	if t.Meta.Format != "" {
		fwText += " (" + Text(t.Meta.Format) + " trace)"
	}
	if v := t.Meta.CUDARuntimeVersion; v > 0 {
		fwText += ", CUDA runtime " + cudaVersion(v)
	}
	if v := t.Meta.CUDADriverVersion; v > 0 {
		fwText += ", driver " + cudaVersion(v)
	}
	if v := t.Meta.CUPTIVersion; v > 0 {
		fwText += fmt.Sprintf(", CUPTI %d", v)
	}
	parts = append(parts, "**Framework** "+fwText)
	if at, ok := recorded(t); ok {
		parts = append(parts, "**Recorded** "+at.UTC().Format("2006-01-02 15:04 MST"))
	}
	steps := "no step markers"
	if !r.Summary.StepsSynthetic {
		steps = plural(r.Summary.Steps, "step")
	}
	parts = append(parts, fmt.Sprintf("**Span** %s, %s, %s", us(r.Summary.WallUs), plural(r.Summary.Events, "event"), steps))
	h := r.Headline()
	parts = append(parts, fmt.Sprintf("**Step** %s (%s) · **GPU busy** %s · **Kernels per step** %s", h.Step, Text(h.StepNote), h.GPUBusy, h.KernelsPerStep))
	d.para("%s", strings.Join(parts, "  \n"))
}

// recorded returns when the trace was taken, if its clock is wall time:
// Kineto writes absolute epoch microseconds, or offsets from
// baseTimeNanoseconds.
func recorded(t *trace.Trace) (time.Time, bool) {
	start := int64(t.Span().Start)
	if start < 1e17 {
		start += t.Meta.BaseTimeNanoseconds
	}
	at := time.Unix(0, start)
	if at.Year() < 2015 || at.Year() > 2100 {
		return time.Time{}, false
	}
	return at, true
}

func cudaVersion(v int) string { return fmt.Sprintf("%d.%d", v/1000, v%1000/10) }

// hasGPU reports whether the trace recorded any GPU activity at all.
func hasGPU(r *analyze.Result) bool {
	return r.Summary.KernelLaunches+r.Summary.Memcpys+r.Summary.Memsets > 0
}

// typical returns the step figures a reader should believe: analyze's
// steady-state medians (the steps after the first).
func typical(r *analyze.Result) (wall, busy, launches, launchAPI float64) {
	s := r.StepStats
	return s.SteadyWallUs, s.SteadyGPUBusyUs, s.SteadyLaunches, s.SteadyLaunchAPIUs
}

func (d *doc) summary(t *trace.Trace, r *analyze.Result) {
	var bullets []string
	per := "each step"
	if r.Summary.StepsSynthetic {
		per = "the trace (no step markers)"
	}
	wall, busy, launches, launchAPI := typical(r)
	// The biggest findings lead, as in a hand-written investigation; the
	// utilisation and kernel bullets that follow give their context.
	shown := 0
	for _, f := range r.Findings {
		if shown == 2 || f.SavingUs <= 0 {
			break
		}
		shown++
		bullets = append(bullets, fmt.Sprintf("**%s**: saves about %s.", upperFirst(Text(f.Title)), savingText(r, f)))
	}
	switch {
	case !hasGPU(r):
		s := fmt.Sprintf("**No GPU activity recorded**: the trace holds %s and %s over %s but no kernel, memcpy or memset, so this report covers CPU time only.",
			plural(len(t.Ops), "CPU op"), plural(len(t.Frames), "Python frame"), us(r.Summary.WallUs))
		if torch(r) {
			s += " Record with `ProfilerActivity.CUDA` to see the GPU."
		}
		bullets = append(bullets, s)
		if len(r.Ops) > 0 {
			o := r.Ops[0]
			bullets = append(bullets, fmt.Sprintf("**%s takes the most CPU time**: %s over %s (%s self).", Code(o.Name), us(o.TotalCPUUs), plural(o.Calls, "call"), us(o.SelfCPUUs)))
		}
	case wall > 0 && r.StepStats.SteadyGPUBusyShare < 0.5:
		s := fmt.Sprintf("**GPU idle %s of %s**: wall %s, GPU busy %s. The host is the bottleneck: %s launches taking %s of CPU in launch calls (%s each) for kernels averaging %s",
			pct(1-r.StepStats.SteadyGPUBusyShare), per, us(wall), us(busy), count(launches), us(launchAPI), us(r.Launches.MeanAPIUs), us(r.Launches.MeanKernelUs))
		if idle := wall - busy; launchAPI < idle/2 {
			s += fmt.Sprintf("; launch calls explain only %s of the %s idle, the rest is host work between launches (Python, framework overhead, compilation, synchronisation)", pct(launchAPI/idle), us(idle))
		}
		bullets = append(bullets, s+".")
	case wall > 0:
		bullets = append(bullets, fmt.Sprintf("**GPU busy %s of %s** (wall %s, GPU busy %s): the GPU is the bottleneck, so the kernels below are where time goes.",
			pct(r.StepStats.SteadyGPUBusyShare), per, us(wall), us(busy)))
	}
	if len(r.Categories) > 0 && len(r.Kernels) > 0 {
		c, k := r.Categories[0], r.Kernels[0]
		all := 0.0
		for _, x := range r.Categories {
			all += x.TotalUs
		}
		s := fmt.Sprintf("**%s kernels take %s of GPU time** (%s of %s); the top kernel %s alone takes %s of kernel time (%s, mean %s)",
			upperFirst(categoryTitle(c.Category)), pct(c.Share), us(c.TotalUs), us(all), Code(shorten(kernelName(k), 60)), pct(k.Share), plural(k.Count, "launch"), us(k.MeanUs))
		s += launchedBy(k) + "."
		bullets = append(bullets, s)
	}
	if s := r.StepStats; s.Count >= 3 && s.MedianWallUsNoFirst > 0 && s.FirstStepUs > 1.2*s.MedianWallUsNoFirst {
		bullets = append(bullets, fmt.Sprintf("**The first step takes %s, %.1f× the median of the others** (%s): warm-up (allocator growth, library handles, compilation); leave it out when timing.",
			us(s.FirstStepUs), s.FirstStepUs/s.MedianWallUsNoFirst, us(s.MedianWallUsNoFirst)))
	}
	if same := sameShape(r.Roofline); len(same) > 0 {
		// Two implementations of one GEMM far apart is the roofline's
		// headline (a library kernel against a hand-written one).
		bullets = append(bullets, same[0])
	} else if row, ok := heaviestRoofline(r.Roofline); ok {
		bullets = append(bullets, fmt.Sprintf("**%s %s reaches %s TFLOP/s, %s of peak** (%s bound, %s FLOP/byte).",
			Code(row.Op), Code(row.Shape), sig(row.TFLOPS), pct(row.Efficiency), Text(row.Bound), sig(row.Intensity)))
	}
	if b, ok := costliestRange(r); ok {
		bullets = append(bullets, b)
	}
	if len(r.Findings) == 0 && hasGPU(r) {
		bullets = append(bullets, fmt.Sprintf("**No finding**: none of the %s analyzers found a problem worth fixing in this trace.", count(float64(len(r.Analyzers)))))
	}
	if r.Summary.StepsSynthetic && hasGPU(r) {
		hint := "call `prof.step()` each iteration"
		if !torch(r) {
			hint = "mark each iteration (`jax.profiler.StepTraceAnnotation` in JAX)"
		}
		bullets = append(bullets, "**No step markers**: the whole trace counts as one step, so per-step figures are per trace; "+hint+" for per-step numbers.")
	}
	if len(bullets) > maxBullets {
		bullets = bullets[:maxBullets]
	}
	for _, b := range bullets {
		d.b.WriteString("- " + b + "\n")
	}
	d.b.WriteString("\n")
}

// maxBullets keeps the executive summary to what a reader takes in at once.
const maxBullets = 6

// torch reports whether the trace came from torch.profiler, so hints can
// name its API.
func torch(r *analyze.Result) bool { return r.Framework == "PyTorch" }

// costliestRange is a summary bullet naming the record_function range with
// the most GPU time when several ranges compete (e.g. variants of one
// kernel under test), with how it compares to the runner-up.
func costliestRange(r *analyze.Result) (string, bool) {
	var ranges []analyze.AnnotationStat
	for _, a := range r.Annotations {
		if a.Kind == analyze.AnnotationRange && a.GPUUs > 0 {
			ranges = append(ranges, a)
		}
	}
	if len(ranges) < 2 {
		return "", false
	}
	slices.SortStableFunc(ranges, func(a, b analyze.AnnotationStat) int { return cmpDesc(a.GPUUs, b.GPUUs) })
	a, b := ranges[0], ranges[1]
	if a.GPUUs < 1.5*b.GPUUs {
		// Nested or comparable ranges: no single culprit to name.
		return "", false
	}
	return fmt.Sprintf("**%s is the costliest range**: %s of GPU time over %s, %.1f× the next, %s (%s).",
		Code(a.Name), us(a.GPUUs), plural(a.Count, "call"), a.GPUUs/b.GPUUs, Code(b.Name), us(b.GPUUs)), true
}

// launchedBy says which op and Python line launched a kernel most often.
func launchedBy(k analyze.Kernel) string {
	var s string
	if len(k.Ops) > 0 {
		s += ", launched by " + Code(k.Ops[0])
	}
	if len(k.Python) > 0 {
		s += " at " + Code(k.Python[0])
	}
	return s
}

// heaviestRoofline returns the roofline row with the most total GPU time.
func heaviestRoofline(rows []analyze.RooflineRow) (analyze.RooflineRow, bool) {
	best, ok := analyze.RooflineRow{}, false
	for _, r := range rows {
		if r.TFLOPS <= 0 {
			continue
		}
		if !ok || r.MeanUs*float64(r.Calls) > best.MeanUs*float64(best.Calls) {
			best, ok = r, true
		}
	}
	return best, ok
}

func (d *doc) steps(t *trace.Trace, r *analyze.Result) {
	d.heading(2, "Step breakdown")
	if len(r.Steps) == 0 {
		d.para("The trace has no timed events, so there is no step to break down.")
		return
	}
	if r.Summary.StepsSynthetic {
		d.para("The trace marks no `ProfilerStep#N` ranges, so the whole trace (%s) counts as one step.", us(r.Summary.WallUs))
	}
	gpu := hasGPU(r)
	cols := []column{left("Step"), right("Wall"), right("GPU busy"), right("GPU idle"), right("Busy"), right("Kernels"), right("Launches"), right("Launch CPU"), right("Sync")}
	if !gpu {
		// A CPU-only trace: GPU columns would be all zeros.
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
		row("**median**", medianStep(steps))
	}
	if len(steps) >= 3 {
		row("**median excl. first**", medianStep(steps[1:]))
	}
	d.table(tb)
	if len(steps) >= 2 {
		lo, hi := steps[0], steps[0]
		for _, s := range steps {
			if s.WallUs < lo.WallUs {
				lo = s
			}
			if s.WallUs > hi.WallUs {
				hi = s
			}
		}
		m := medianStep(steps)
		line := fmt.Sprintf("Every step takes %s.", us(lo.WallUs))
		if hi.WallUs > lo.WallUs {
			line = fmt.Sprintf("Wall time ranges from %s (#%d) to %s (#%d)", us(lo.WallUs), lo.Number, us(hi.WallUs), hi.Number)
			if m.WallUs > 0 {
				line += fmt.Sprintf(", a spread of %s of the median", pct((hi.WallUs-lo.WallUs)/m.WallUs))
			}
			line += "."
		}
		if s := r.StepStats; len(steps) >= 3 && s.MedianWallUsNoFirst > 0 {
			ratio := s.FirstStepUs / s.MedianWallUsNoFirst
			if ratio > 1.2 {
				line += fmt.Sprintf(" The first step is %.2f× the median of the others: warm-up, excluded from the medians the summary quotes.", ratio)
			} else {
				line += fmt.Sprintf(" The first step is %.2f× the median of the others: no notable warm-up.", ratio)
			}
		}
		d.para("%s", line)
		d.chart(stepsMermaid(steps, gpu), func() string { return stepsSVG(steps) })
	}
	if gpu {
		cat := map[string]string{}
		for _, k := range r.Kernels {
			cat[k.Name] = k.Category
		}
		d.chart("", func() string { return timelineSVG(t, cat) })
	}
}

// medianStep returns the per-column medians of steps.
func medianStep(steps []analyze.Step) analyze.Step {
	col := func(f func(analyze.Step) float64) float64 {
		v := make([]float64, len(steps))
		for i, s := range steps {
			v[i] = f(s)
		}
		return analyze.Median(v)
	}
	return analyze.Step{
		WallUs:       col(func(s analyze.Step) float64 { return s.WallUs }),
		GPUBusyUs:    col(func(s analyze.Step) float64 { return s.GPUBusyUs }),
		GPUIdleUs:    col(func(s analyze.Step) float64 { return s.GPUIdleUs }),
		GPUBusyShare: col(func(s analyze.Step) float64 { return s.GPUBusyShare }),
		Kernels:      int(math.Round(col(func(s analyze.Step) float64 { return float64(s.Kernels) }))),
		Launches:     int(math.Round(col(func(s analyze.Step) float64 { return float64(s.Launches) }))),
		LaunchAPIUs:  col(func(s analyze.Step) float64 { return s.LaunchAPIUs }),
		SyncUs:       col(func(s analyze.Step) float64 { return s.SyncUs }),
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

func (d *doc) kernels(r *analyze.Result) {
	d.heading(2, "Top kernels")
	if len(r.Kernels) == 0 {
		d.para("No GPU kernels in this trace.")
		return
	}
	top := r.Kernels[:min(len(r.Kernels), d.opt.TopKernels)]
	topShare := 0.0
	for _, k := range top {
		topShare += k.Share
	}
	d.para("%s of %s, %s of GPU kernel time; the top %d take %s.",
		plural(r.Summary.KernelLaunches, "kernel launch"), plural(r.Summary.DistinctKernels, "distinct kernel"), us(r.Summary.GPUKernelUs), len(top), pct(topShare))
	python := false
	for _, k := range top {
		python = python || len(k.Python) > 0
	}
	cols := []column{right("#"), left("Kernel"), left("Category"), right("Share"), right("Total"), right("Count"), right("Mean"), left("Launched by op"), left("Python line")}
	if !python {
		// Without Python stacks the column would be all dashes.
		cols = cols[:len(cols)-1]
	}
	tb := newTable(cols...)
	var bars []bar
	long := false
	for i, k := range top {
		short := shorten(kernelName(k), 60)
		if short != k.Name {
			long = true
		}
		cells := []string{fmt.Sprint(i + 1), Code(short), categoryTitle(k.Category), pct(k.Share), us(k.TotalUs), count(float64(k.Count)), us(k.MeanUs), codeList(k.Ops), codeList(k.Python)}
		tb.add(cells[:len(cols)]...)
		bars = append(bars, bar{label: fmt.Sprintf("%d. %s", i+1, kernelName(k)), value: k.TotalUs, text: pct(k.Share) + " · " + us(k.TotalUs), class: categoryClass(k.Category)})
	}
	d.table(tb)
	if !python {
		if torch(r) {
			d.para("The trace has no Python stacks, so kernels cannot be traced to a source line: record with `with_stack=True` to get them.")
		} else {
			d.para("The trace links no Python frames to kernel launches, so kernels cannot be traced to a source line.")
		}
	}
	d.chart("", func() string { return barsSVG("Share of GPU kernel time, top kernels", bars) })
	if long {
		open, closing := details("Full kernel names")
		d.b.WriteString(open)
		full := newTable(right("#"), left("Full name"))
		for i, k := range top {
			full.add(fmt.Sprint(i+1), Code(shorten(k.Name, maxFullName)))
		}
		d.table(full)
		d.b.WriteString(closing)
	}
}

// maxFullName bounds the names in the full-name table: a templated
// PyTorch kernel name can run to kilobytes; the JSON report keeps it whole.
const maxFullName = 800

// kernelName is the name to show in tables: the short C++ name, or the
// raw name when shortening found nothing readable in it.
func kernelName(k analyze.Kernel) string {
	if strings.TrimSpace(k.ShortName) != "" {
		return k.ShortName
	}
	return k.Name
}

// categoryTitle is a category as a reader writes it.
func categoryTitle(c string) string {
	switch c {
	case analyze.CategoryGEMM, analyze.CategoryGEMV, analyze.CategoryRNG:
		return strings.ToUpper(c)
	case analyze.CategoryTriton:
		return "Triton"
	}
	return Text(c)
}

// codeList shows the first name and how many others there are.
func codeList(names []string) string {
	if len(names) == 0 {
		return ""
	}
	s := Code(shorten(names[0], 60))
	if len(names) > 1 {
		s += fmt.Sprintf(" (+%d)", len(names)-1)
	}
	return s
}

// tier groups a finding like the hand-written investigations' "Tier 1/2/3":
// by its saving as a share of the step, or by severity when the analyzer
// could not estimate a saving.
func tier(f analyze.Finding) int {
	if f.SavingUs > 0 && f.Share > 0 {
		switch {
		case f.Share >= 0.2:
			return 1
		case f.Share >= 0.05:
			return 2
		}
		return 3
	}
	switch f.Severity {
	case analyze.High:
		return 1
	case analyze.Medium:
		return 2
	}
	return 3
}

var tierNames = [...]string{1: "Tier 1: high impact (20% of the step or more)", 2: "Tier 2: medium impact (5–20% of the step)", 3: "Tier 3: lower impact"}

func (d *doc) findings(r *analyze.Result) {
	d.heading(2, "Findings")
	if len(r.Findings) == 0 {
		d.para("No finding: the %s that ran (%s) found nothing worth fixing.", plural(len(r.Analyzers), "analyzer"), codeJoin(r.Analyzers))
		return
	}
	d.para("%s, ranked by estimated saving per step and grouped by expected impact. Each saving is an estimate whose model is stated in its evidence.", plural(len(r.Findings), "finding"))
	nums := make([]string, len(r.Findings))
	for t := 1; t <= 3; t++ {
		n := 0
		for i, f := range r.Findings {
			if tier(f) != t {
				continue
			}
			if n == 0 {
				d.heading(3, tierNames[t])
			}
			n++
			nums[i] = fmt.Sprintf("%d.%d", t, n)
			d.finding(nums[i], f)
		}
	}
	d.combined(r, nums)
}

// combined states what fixing every finding saves, counting findings that
// draw on the same time once, and names those that overlap.
func (d *doc) combined(r *analyze.Result, nums []string) {
	if len(r.Findings) < 2 || r.Summary.CombinedSavingUs <= 0 {
		return
	}
	d.heading(3, "All findings together")
	per := "per step"
	if r.Summary.StepsSynthetic {
		per = "over the run"
	}
	d.para("Fixing every finding saves about %s %s (%s of the step): savings that come out of the same time are counted once.",
		us(r.Summary.CombinedSavingUs), per, pct(r.Summary.CombinedSavingShare))
	for _, o := range r.Overlaps {
		ids := make([]string, len(o.Findings))
		for i, n := range o.Findings {
			ids[i] = nums[n]
		}
		d.b.WriteString(fmt.Sprintf("- Findings %s overlap: they all save %s time, %s %s, so together about %s rather than the %s their savings add up to.\n",
			strings.Join(ids, ", "), Text(analyze.SavingFromText(o.SavingFrom)), us(o.AvailableUs), per, us(o.CombinedUs), us(o.SumUs)))
	}
	if len(r.Overlaps) > 0 {
		d.b.WriteString("\n")
	}
}

func (d *doc) finding(num string, f analyze.Finding) {
	d.heading(4, num+" "+upperFirst(Text(f.Title)))
	saving := "not estimated"
	if f.SavingUs > 0 {
		saving = "about " + savingText(d.result, f)
	}
	d.para("**Saving** %s · **Severity** %s · **Confidence** %s · **Analyzer** %s", saving, Text(f.Severity), Text(f.Confidence), Code(f.ID))
	// Evidence keeps the analyzer's order: runs of plain lines become one
	// bullet list, and a line that introduces a table sits right above it.
	inList := false
	for _, e := range f.Evidence {
		hasTable := e.Table != nil && len(e.Table.Columns) > 0
		if e.Text != "" && !hasTable {
			d.b.WriteString("- " + upperFirst(Text(e.Text)) + kernelList(" (kernels: ", e.Kernels, ")") + "\n")
			inList = true
			continue
		}
		if inList {
			d.b.WriteString("\n")
			inList = false
		}
		if e.Text != "" {
			d.para("%s", upperFirst(Text(e.Text)))
		}
		if hasTable {
			cols := make([]column, len(e.Table.Columns))
			for i, c := range e.Table.Columns {
				cols[i] = left(Text(c.Name))
				if c.Kind.Numeric() {
					cols[i] = right(Text(c.Name))
				}
			}
			tb := newTable(cols...)
			for _, row := range e.Table.Rows {
				cells := make([]string, len(cols))
				for i := range cells {
					if i < len(row) {
						cells[i] = Text(evidenceCell(row[i], e.Kernels))
					}
				}
				tb.add(cells...)
			}
			d.table(tb)
		}
		if !hasTable && len(e.Kernels) > 0 {
			d.para("%s", kernelList("Kernels: ", e.Kernels, "."))
		}
	}
	if inList {
		d.b.WriteString("\n")
	}
	if f.Fix != "" {
		d.para("**Fix:** %s", upperFirst(Text(f.Fix)))
	}
}

// kernelList names up to six kernels by their short names between prefix
// and suffix, or returns "" for none.
func kernelList(prefix string, kernels []string, suffix string) string {
	if len(kernels) == 0 {
		return ""
	}
	var ks []string
	for i, k := range kernels {
		if i == 6 {
			ks = append(ks, fmt.Sprintf("and %d more", len(kernels)-6))
			break
		}
		ks = append(ks, Code(shorten(analyze.ShortKernelName(k), 60)))
	}
	return prefix + strings.Join(ks, ", ") + suffix
}

// savingText states a finding's saving in the trace's terms: per step, or
// over the whole run when the trace marks no steps.
func savingText(r *analyze.Result, f analyze.Finding) string {
	if r.Summary.StepsSynthetic {
		s := us(f.SavingUs) + " over the traced run"
		if f.Share > 0 {
			s += " (" + pct(f.Share) + " of it)"
		}
		return s
	}
	s := us(f.SavingUs) + " per step"
	if f.Share > 0 {
		s += " (" + pct(f.Share) + " of the step)"
	}
	return s
}

// evidenceCell formats a typed cell the one way every face does,
// shortening a kernel's full name the way the kernel tables do and
// bounding any other long name.
func evidenceCell(v analyze.Value, kernels []string) string {
	s := v.String()
	if v.Kind == analyze.KindName && len(s) > 60 && (slices.Contains(kernels, s) || strings.ContainsAny(s, "<(")) {
		s = analyze.ShortKernelName(s)
	}
	return shorten(s, 100)
}

func (d *doc) roofline(r *analyze.Result) {
	d.heading(2, "Roofline")
	if len(r.Roofline) == 0 {
		switch {
		case !hasGPU(r):
			d.para("No GPU kernels: nothing to place on the roofline.")
		default:
			d.para("No GEMM-like op with known FLOPs. Record with `record_shapes=True` (and `with_flops=True`) so shapes, and from them FLOPs and bytes, are known.")
		}
		return
	}
	first := r.Roofline[0]
	d.para("Each row is one op shape; FLOPs and bytes are per call, bytes assume each operand and the result cross DRAM once. Peaks are the device's dense peak for the row's dtype and its DRAM bandwidth (%.0f GB/s); an op below the ridge point (FLOP/byte) is memory bound.", first.PeakGBps)
	tb := newTable(right("#"), left("Op"), left("Shape"), left("dtype"), left("Kernel"), right("Calls"), right("Mean"), right("TFLOP/s"), right("GB/s"), right("FLOP/byte"), right("Ridge"), left("Bound"), right("Peak TFLOP/s"), right("% of peak"))
	for i, row := range r.Roofline {
		tb.add(fmt.Sprint(i+1), Code(row.Op), Code(row.Shape), Text(row.DType), Code(shorten(analyze.ShortKernelName(row.Kernel), 48)), count(float64(row.Calls)), us(row.MeanUs),
			sig(row.TFLOPS), fmt.Sprintf("%.0f", row.GBps), sig(row.Intensity), fmt.Sprintf("%.0f", row.Ridge), Text(row.Bound),
			fmt.Sprintf("%.0f", row.PeakTFLOPS), pct(row.Efficiency))
	}
	d.table(tb)
	for _, line := range sameShape(r.Roofline) {
		d.b.WriteString("- " + line + "\n")
	}
	if len(sameShape(r.Roofline)) > 0 {
		d.b.WriteString("\n")
	}
	d.chart("", func() string { return rooflineSVG(r.Roofline) })
}

// sameShape compares implementations of the same work: rows with one
// shape and dtype (a library GEMM and hand-written variants of it) whose
// throughput differs by 20% or more, fastest against slowest.
func sameShape(rows []analyze.RooflineRow) []string {
	type group struct{ best, worst analyze.RooflineRow }
	var keys []string
	groups := map[string]*group{}
	for _, r := range rows {
		if r.TFLOPS <= 0 {
			continue
		}
		k := r.Shape + "\x00" + r.DType
		g, ok := groups[k]
		if !ok {
			keys = append(keys, k)
			groups[k] = &group{r, r}
			continue
		}
		if r.TFLOPS > g.best.TFLOPS {
			g.best = r
		}
		if r.TFLOPS < g.worst.TFLOPS {
			g.worst = r
		}
	}
	var out []string
	for _, k := range keys {
		g := groups[k]
		if g.best.Op == g.worst.Op || g.best.TFLOPS < 1.2*g.worst.TFLOPS {
			continue
		}
		out = append(out, fmt.Sprintf("**Same work, %s %s: %s reaches %s TFLOP/s (%s of peak), %s only %s (%s), %.1f× slower.**",
			Code(g.best.Shape), Text(g.best.DType), Code(g.best.Op), sig(g.best.TFLOPS), pct(g.best.Efficiency), Code(g.worst.Op), sig(g.worst.TFLOPS), pct(g.worst.Efficiency), g.best.TFLOPS/g.worst.TFLOPS))
		if len(out) == 3 {
			break
		}
	}
	return out
}

func (d *doc) nextSteps(r *analyze.Result) {
	d.heading(2, "Recommended next steps")
	if len(r.Findings) == 0 {
		switch {
		case !hasGPU(r) && torch(r):
			d.para("Re-record with `activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]` so the GPU side is in the trace.")
		case !hasGPU(r):
			d.para("Re-record with GPU tracing enabled so the GPU side is in the trace.")
		default:
			d.para("Nothing stands out. Profile a larger batch or more steps, or compare against a baseline with `tracelens diff`.")
		}
		return
	}
	for i, f := range r.Findings {
		if i == 5 {
			break
		}
		line := fmt.Sprintf("%d. **%s**", i+1, upperFirst(Text(f.Title)))
		if f.SavingUs > 0 {
			per := " per step"
			if r.Summary.StepsSynthetic {
				per = " over the run"
			}
			line += " (saves about " + us(f.SavingUs) + per + ")"
		}
		if f.Fix != "" {
			line += ": " + Text(f.Fix)
		}
		d.b.WriteString(line + "\n")
	}
	d.b.WriteString("\n")
}

func (d *doc) appendix(t *trace.Trace, r *analyze.Result) {
	d.heading(2, "Appendix")
	d.heading(3, "Trace metadata")
	tb := newTable(left("Field"), left("Value"))
	tb.add("Source", Code(r.Source))
	tb.add("Format", Text(t.Meta.Format))
	tb.add("Framework", Text(r.Framework))
	if t.Meta.TraceName != "" {
		tb.add("Trace name", Code(t.Meta.TraceName))
	}
	if t.Meta.SchemaVersion > 0 {
		tb.add("Schema version", fmt.Sprint(t.Meta.SchemaVersion))
	}
	if v := t.Meta.CUDADriverVersion; v > 0 {
		tb.add("CUDA driver", cudaVersion(v))
	}
	if v := t.Meta.CUDARuntimeVersion; v > 0 {
		tb.add("CUDA runtime", cudaVersion(v))
	}
	if v := t.Meta.CUPTIVersion; v > 0 {
		tb.add("CUPTI", fmt.Sprint(v))
	}
	for _, dv := range t.Meta.Devices {
		tb.add(fmt.Sprintf("Device %d", dv.ID), fmt.Sprintf("%s, %d SMs, compute %d.%d, %.1f GiB, %d regs/SM, %d KiB shared/SM",
			Text(dv.Name), dv.NumSMs, dv.ComputeMajor, dv.ComputeMinor, float64(dv.TotalGlobalMem)/(1<<30), dv.RegsPerSM, dv.SharedMemPerSM/1024))
	}
	tb.add("Events", count(float64(t.Events)))
	tb.add("Span", us(r.Summary.WallUs))
	tb.add("Threads", count(float64(len(t.Threads))))
	tb.add("Modelled", fmt.Sprintf("%s, %s, %s, %s, %s", plural(len(t.GPU), "GPU activity"), plural(len(t.APICalls), "API call"),
		plural(len(t.Ops), "op"), plural(len(t.Frames), "Python frame"), plural(len(t.Annotations), "annotation")))
	keys := make([]string, 0, len(t.Meta.Other))
	for k := range t.Meta.Other {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		tb.add(Code(k), Code(t.Meta.Other[k]))
	}
	d.table(tb)

	d.heading(3, "Skipped events")
	if len(t.Skipped) == 0 {
		d.para("Nothing was skipped: every event in the trace is in the model.")
	} else {
		d.para("Events the reader did not model, so no figure above counts them:")
		sk := newTable(left("Reason"), right("Count"), right("First at byte"))
		for _, s := range t.Skipped {
			sk.add(Text(s.Reason), count(float64(s.Count)), fmt.Sprint(s.FirstOffset))
		}
		d.table(sk)
	}

	if len(r.Corrections) > 0 {
		d.heading(3, "Figures withheld")
		d.para("Analysis produced %s that cannot be true; they are left out of this report (a bug worth reporting with the trace):", plural(len(r.Corrections), "figure"))
		for _, c := range r.Corrections {
			d.b.WriteString("- " + upperFirst(Text(c)) + "\n")
		}
		d.b.WriteString("\n")
	}

	d.heading(3, "Analyzers")
	if len(r.Analyzers) == 0 {
		d.para("No analyzer ran.")
		return
	}
	at := newTable(left("Analyzer"), right("Findings"), left("What it checks"))
	for _, name := range r.Analyzers {
		n := 0
		for _, f := range r.Findings {
			if f.ID == name {
				n++
			}
		}
		doc := ""
		if a := analyze.Lookup(name); a != nil {
			doc = firstSentence(a.Doc)
		}
		at.add(Code(name), fmt.Sprint(n), Text(doc))
	}
	d.table(at)
}

func (d *doc) comparison(in []Input) {
	d.heading(2, "Comparison")
	d.para("One row per trace; the step columns use the median step after the first (the steady state), and \"vs first\" compares with the first trace.")
	tb := newTable(left("Trace"), left("Device"), right("Steps"), right("Median step"), right("vs first"), right("GPU busy"), right("Launches/step"),
		right("Kernels"), right("GPU kernel time"), left("Top category"), left("Top finding"))
	base, _, _, _ := typical(in[0].Result)
	for _, x := range in {
		r := x.Result
		wall, _, launches, _ := typical(r)
		steps := fmt.Sprint(r.Summary.Steps)
		if r.Summary.StepsSynthetic {
			steps = "none"
		}
		vs := ""
		if base > 0 && wall > 0 {
			vs = fmt.Sprintf("%.2f×", wall/base)
		}
		busyS := "no GPU"
		if hasGPU(r) && wall > 0 {
			busyS = pct(r.StepStats.SteadyGPUBusyShare)
		}
		topCat := ""
		if len(r.Categories) > 0 {
			topCat = categoryTitle(r.Categories[0].Category) + " " + pct(r.Categories[0].Share)
		}
		topFinding := ""
		if len(r.Findings) > 0 {
			f := r.Findings[0]
			topFinding = Code(f.ID)
			if f.SavingUs > 0 {
				topFinding += " (" + us(f.SavingUs) + ")"
			}
		}
		dev := Text(r.Device)
		tb.add(Code(workload(r.Source)), dev, steps, us(wall), vs, busyS, count(launches), count(float64(r.Summary.KernelLaunches)), us(r.Summary.GPUKernelUs), topCat, topFinding)
	}
	d.table(tb)
}

// Formatting helpers. Durations are microseconds in analyze's Result and
// shown with trace.Duration's readable units.

// us, pct and count format figures the way every face does (analyze's
// formatters), so a figure reads the same in the report, findings and tui.
func us(v float64) string    { return analyze.FormatUs(v) }
func pct(f float64) string   { return analyze.FormatShare(f) }
func count(v float64) string { return analyze.FormatCount(v) }

// sig formats v with three significant digits for chart data.
func sig(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	switch {
	case strings.HasSuffix(noun, "ch"), strings.HasSuffix(noun, "s"):
		return fmt.Sprintf("%d %ses", n, noun)
	case strings.HasSuffix(noun, "ity"):
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(noun, "y"))
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// upperFirst capitalises a sentence that starts with a plain lowercase
// word; identifiers (torch.compile, fp32, aten::mm) keep their spelling.
func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || !unicode.IsLower(r) {
		return s
	}
	word, _, _ := strings.Cut(s, " ")
	for _, c := range word {
		if !unicode.IsLetter(c) && c != ',' && c != ':' && c != '-' {
			return s
		}
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

func codeJoin(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = Code(n)
	}
	return strings.Join(out, ", ")
}

// mermaidLabel makes a pie slice label safe inside mermaid's double quotes.
func mermaidLabel(s string) string {
	return strings.NewReplacer(`"`, "'", "\\", "/", "#", "").Replace(sanitize(s))
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

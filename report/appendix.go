package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/trace"
)

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
		switch {
		case f.NoTimeCost():
			line += " (no time: the cost is device memory)"
		case f.SavingFrom == analyze.FromOneOff:
			line += " (a one-time " + us(f.OneOffUs) + ")"
		case f.SavingUs > 0:
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

// appendix is the report's reference part: the trace's metadata, what the
// reader skipped, figures withheld as impossible, and the analyzers run.
func (d *doc) appendix(t *trace.Trace, r *analyze.Result) {
	d.heading(2, "Appendix")
	d.heading(3, "Trace metadata")
	d.table(metadataTable(t, r))

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

	d.analyzersRun(r)
}

// metadataTable lists what the trace says of itself: source, format,
// versions, devices, sizes and the metadata's other keys.
func metadataTable(t *trace.Trace, r *analyze.Result) *table {
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
	return tb
}

// analyzersRun lists the analyzers that ran, with their findings' count
// and what each checks.
func (d *doc) analyzersRun(r *analyze.Result) {
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
	baseWhole := wholeTraceStep(in[0].Result)
	var notComparable []string
	for _, x := range in {
		r := x.Result
		wall, _, launches, _ := typical(r)
		steps := fmt.Sprint(r.Summary.Steps)
		if wholeTraceStep(r) {
			steps = "none"
		}
		vs := ""
		switch {
		case wholeTraceStep(r) != baseWhole:
			// A whole trace holds the profiler's own start and stop,
			// compilation and every call: against one real step its
			// ratio means nothing (jax_eggroll: 47.9 ms, 40 of them the
			// profiler's start/stop, "34.9× slower" than a 1.37 ms step).
			vs = "not comparable"
			notComparable = append(notComparable, Code(workload(r.Source)))
		case base > 0 && wall > 0:
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
		stepS := us(wall)
		if wholeTraceStep(r) && wall > 0 {
			stepS += " (whole trace)"
		}
		tb.add(Code(workload(r.Source)), dev, steps, stepS, vs, busyS, count(launches), count(float64(r.Summary.KernelLaunches)), us(r.Summary.GPUKernelUs), topCat, topFinding)
	}
	d.table(tb)
	if len(notComparable) > 0 {
		first := "marks steps"
		if baseWhole {
			first = "marks no steps"
		}
		d.para("%s: the first trace %s and these do the opposite, so one side's \"median step\" is its whole trace — with the profiler's own start and stop, "+
			"warm-up and compilation in it — and is not comparable with a step; the ratio is left out. Mark the iterations (`prof.step()`, or one `record_function` per call) "+
			"and compare per step, or compare GPU kernel time per call.", strings.Join(notComparable, ", "), first)
	}
}

// wholeTraceStep reports whether r's "step" is its whole trace: no
// ProfilerStep and no repeated range or call to stand in for one.
func wholeTraceStep(r *analyze.Result) bool {
	return r.Summary.StepsSynthetic || r.Summary.StepSource == analyze.StepSourceTrace
}

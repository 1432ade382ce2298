package main

import (
	"fmt"
	"io"
	"sort"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/distributed"
	"github.com/tracelens/tracelens/termtext"
	"github.com/tracelens/tracelens/trace"
)

const infoArgs = "TRACE"

func infoCommand() command {
	return command{name: "info", args: infoArgs, summary: "what a trace holds: format, device, span, categories, steps, streams, skips", run: runInfo,
		examples: []string{
			"tracelens info trace.json.gz",
			"tracelens info runs/ddp/   # a run: one trace per rank",
			"tracelens info embedded:eggroll_hooks.json.gz",
		}}
}

func runInfo(e *env, args []string) error {
	fs := newFlags("info")
	pos, err := parseFlags(e, fs, infoArgs, args)
	if err != nil {
		return err
	}
	rf := &e.run
	if distributed.IsRun(pos) {
		return runInfoRun(e, pos, rf)
	}
	path, err := oneTrace(pos)
	if err != nil {
		return err
	}
	t, err := loadTrace(e, path)
	if err != nil {
		return err
	}
	writeInfo(e.stdout, t)
	return nil
}

// writeInfo prints what the trace holds: its format and versions, the
// devices, events per category, steps, GPU streams, host records, and what
// ingest warned about or skipped. Every string from the trace file (or its
// name) is sanitized: it is safe for the terminal only then.
func writeInfo(w io.Writer, t *trace.Trace) {
	san := termtext.Sanitize
	fmt.Fprintf(w, "trace      %s\n", san(t.Source))
	writeInfoFormat(w, &t.Meta)
	span := t.Span()
	fmt.Fprintf(w, "span       %s\n", span.Dur())
	fmt.Fprintf(w, "events     %d\n", t.Events)
	for _, c := range t.Categories {
		fmt.Fprintf(w, "  %-22s %8d\n", san(c.Category), c.Count)
	}
	writeInfoSteps(w, t)
	writeInfoStreams(w, t)
	linked := 0
	kernels := 0
	for i := range t.GPU {
		if t.GPU[i].Kind == trace.Kernel {
			kernels++
			if t.GPU[i].Launch != trace.None {
				linked++
			}
		}
	}
	fmt.Fprintf(w, "kernels    %d, %d linked to their launch call\n", kernels, linked)
	fmt.Fprintf(w, "host       %d API calls, %d ops, %d Python frames, %d annotations, %d threads\n",
		len(t.APICalls), len(t.Ops), len(t.Frames), len(t.Annotations), len(t.Threads))
	for _, x := range t.Warnings {
		fmt.Fprintf(w, "warning    %s\n", san(x))
	}
	if len(t.Skipped) == 0 {
		fmt.Fprintln(w, "skipped    nothing")
		return
	}
	fmt.Fprintln(w, "skipped")
	for _, s := range t.Skipped {
		fmt.Fprintf(w, "  %-40s %8d  (first at byte %d)\n", san(s.Reason), s.Count, s.FirstOffset)
	}
}

// writeInfoFormat prints the format line (framework and the CUDA, CUPTI
// and Nsight Systems versions the trace names) and the devices.
func writeInfoFormat(w io.Writer, m *trace.Metadata) {
	san := termtext.Sanitize
	fw := m.Framework
	if fw == "" {
		fw = "unknown framework"
	}
	fmt.Fprintf(w, "format     %s (%s)", san(m.Format), san(fw))
	if m.CUDADriverVersion > 0 {
		fmt.Fprintf(w, ", CUDA driver %s", cudaVersion(m.CUDADriverVersion))
	}
	if m.CUDARuntimeVersion > 0 {
		fmt.Fprintf(w, ", runtime %s", cudaVersion(m.CUDARuntimeVersion))
	}
	if m.CUPTIVersion > 0 {
		fmt.Fprintf(w, ", CUPTI %d", m.CUPTIVersion)
	}
	if v := m.Other["nsys_version"]; v != "" {
		fmt.Fprintf(w, ", Nsight Systems %s", san(v))
		if s := m.Other["nsys_schema_version"]; s != "" {
			fmt.Fprintf(w, " (export schema %s)", san(s))
		}
	}
	fmt.Fprintln(w)
	if len(m.Devices) == 0 {
		fmt.Fprintln(w, "device     not recorded")
	}
	for _, d := range m.Devices {
		fmt.Fprintf(w, "device     %d: %s, %d SMs, compute %d.%d, %.1f GiB\n", d.ID, san(d.Name), d.NumSMs, d.ComputeMajor, d.ComputeMinor, float64(d.TotalGlobalMem)/(1<<30))
	}
}

// writeInfoStreams prints each GPU stream (by device) with its kernel,
// memcpy and memset counts and busy time.
func writeInfoStreams(w io.Writer, t *trace.Trace) {
	type lane struct{ dev, stream int32 }
	count := map[lane][3]int{}
	var busy = map[lane]trace.Duration{}
	for i := range t.GPU {
		g := &t.GPU[i]
		l := lane{g.Device, g.Stream}
		c := count[l]
		c[g.Kind]++
		count[l] = c
		busy[l] += g.Dur()
	}
	lanes := make([]lane, 0, len(count))
	for l := range count {
		lanes = append(lanes, l)
	}
	sort.Slice(lanes, func(i, j int) bool {
		if lanes[i].dev != lanes[j].dev {
			return lanes[i].dev < lanes[j].dev
		}
		return lanes[i].stream < lanes[j].stream
	})
	fmt.Fprintf(w, "streams    %d\n", len(lanes))
	for _, l := range lanes {
		c := count[l]
		fmt.Fprintf(w, "  device %d stream %-4d %6d kernels %5d memcpy %5d memset  %s busy\n", l.dev, l.stream, c[0], c[1], c[2], busy[l])
	}
}

func cudaVersion(v int) string {
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}

// writeInfoSteps writes the steps as the analysis takes them
// (analyze.WithSteps): the ProfilerStep#N marks, else the repeated
// top-level ranges or calls it derives, so info counts the steps that
// findings and report count.
func writeInfoSteps(w io.Writer, t *trace.Trace) {
	st, source, label := analyze.WithSteps(t)
	if len(st.Steps) == 0 || len(st.Steps) == 1 && st.Steps[0].Synthetic {
		fmt.Fprintf(w, "steps      none marked (ProfilerStep#N) or repeated: the whole trace counts as one step\n")
		return
	}
	fmt.Fprintf(w, "steps      %d", len(st.Steps))
	if st != t && label != "" {
		fmt.Fprintf(w, " (no ProfilerStep#N: each %s %s is one)", source, termtext.Sanitize(label))
	}
	fmt.Fprint(w, ":")
	for i, s := range st.Steps {
		if i == 12 {
			fmt.Fprintf(w, " ...")
			break
		}
		fmt.Fprintf(w, " #%d %s", s.Number, s.Dur())
	}
	fmt.Fprintln(w)
}

package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/trace"
)

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
	if src := stepSource(r); src != "" {
		steps += " (" + src + ")"
	}
	parts = append(parts, fmt.Sprintf("**Span** %s, %s, %s", us(r.Summary.WallUs), plural(r.Summary.Events, "event"), steps))
	if len(r.ProfilerOptions) > 0 {
		// These options inflate host-side times; say so before any figure.
		var opts []string
		for _, o := range r.ProfilerOptions {
			opts = append(opts, Code(o))
		}
		parts = append(parts, "**Profiler options** "+strings.Join(opts, ", ")+" (inflate host times)")
	}
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

// stepSource says where derived steps come from (a repeated range or
// call), or "" when the trace marks ProfilerStep or has one whole-trace
// step.
func stepSource(r *analyze.Result) string {
	switch r.Summary.StepSource {
	case analyze.StepSourceRange:
		kind := "record_function"
		if r.Summary.Format == "nsys" {
			kind = "NVTX"
		}
		return "steps are the repeated " + kind + " range " + Code(r.Summary.StepLabel)
	case analyze.StepSourceCall:
		return "steps are the repeated calls of " + Code(r.Summary.StepLabel)
	}
	return ""
}

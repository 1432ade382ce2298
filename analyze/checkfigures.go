package analyze

import (
	"fmt"
	"math"
	"reflect"
	"strings"
)

// checkFigures is the part of Check that holds for every number: none is
// NaN or infinite, no time (a field ending in Us or Ns) is negative, and
// the figures that are parts of a whole stay within it: a union of
// intervals within their summed durations, a kernel's statistics in order,
// and within each step compute and communication busy, irreducible work
// within GPU busy, idle gaps within idle time and the phases within the
// kernel time.
func checkFigures(r *Result, bad func(string, ...any)) {
	walkFloats(reflect.ValueOf(r).Elem(), "result", func(path string, v float64) {
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			bad("%s = %v", path, v)
		case v < 0 && (strings.HasSuffix(path, "Us") || strings.HasSuffix(path, "Ns")):
			bad("%s = %v: a negative time", path, v)
		}
	})
	// Sums of the same durations in another order differ by rounding.
	within := func(part, whole float64) bool { return part <= whole*(1+1e-9)+1e-6 }
	s := r.Summary
	if s.GPUActivityUs > 0 && !within(s.GPUBusyUs, s.GPUActivityUs) {
		bad("GPU busy %vµs above the %vµs the GPU activities add up to", s.GPUBusyUs, s.GPUActivityUs)
	}
	if s.GPUActivityUs > 0 && math.Abs(s.GPUActivityUs-(s.GPUKernelUs+s.MemcpyUs+s.MemsetUs)) > 1e-6*s.GPUActivityUs+1e-3 {
		bad("GPU activity %vµs is not kernels %v + memcpy %v + memset %v", s.GPUActivityUs, s.GPUKernelUs, s.MemcpyUs, s.MemsetUs)
	}
	for _, k := range r.Kernels {
		if !(k.MinUs <= k.MedianUs && k.MedianUs <= k.P95Us && k.P95Us <= k.MaxUs && k.MinUs <= k.MeanUs && k.MeanUs <= k.MaxUs*(1+1e-9)) {
			bad("kernel %s: min %v, median %v, p95 %v, max %v, mean %v out of order", k.ShortName, k.MinUs, k.MedianUs, k.P95Us, k.MaxUs, k.MeanUs)
		}
	}
	for _, st := range r.Steps {
		for _, c := range []struct {
			what        string
			part, whole float64
		}{
			{"compute busy within GPU busy", st.ComputeBusyUs, st.GPUBusyUs},
			{"communication within GPU busy", st.CommunicationUs, st.GPUBusyUs},
			{"irreducible work within GPU busy", st.IrreducibleGPUUs, st.GPUBusyUs},
			{"launch and long gaps within GPU idle", st.LaunchGapIdleUs + st.LongGapIdleUs, st.GPUIdleUs},
			{"forward, backward and optimizer within kernel time", st.ForwardUs + st.BackwardUs + st.OptimizerUs, st.KernelUs},
		} {
			if !within(c.part, c.whole) {
				bad("step %d: %s: %v of %v", st.Number, c.what, c.part, c.whole)
			}
		}
	}
	ss := r.StepStats
	if !within(ss.SteadyIrreducibleUs, ss.SteadyGPUBusyUs) {
		bad("irreducible work %vµs above GPU busy %vµs per step", ss.SteadyIrreducibleUs, ss.SteadyGPUBusyUs)
	}
	for _, o := range r.Overlaps {
		if !within(o.CombinedUs, o.AvailableUs) {
			bad("overlap %s: combined %vµs above the %vµs available", o.SavingFrom, o.CombinedUs, o.AvailableUs)
		}
	}
}

// walkFloats calls f with every float64 reachable from v (struct fields,
// slice elements, pointers), named by its path.
func walkFloats(v reflect.Value, path string, f func(string, float64)) {
	switch v.Kind() {
	case reflect.Float64:
		f(path, v.Float())
	case reflect.Pointer:
		if !v.IsNil() {
			walkFloats(v.Elem(), path, f)
		}
	case reflect.Slice:
		for i := range v.Len() {
			walkFloats(v.Index(i), fmt.Sprintf("%s[%d]", path, i), f)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			if t.Field(i).IsExported() {
				walkFloats(v.Field(i), path+"."+t.Field(i).Name, f)
			}
		}
	}
}

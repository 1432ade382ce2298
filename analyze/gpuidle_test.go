package analyze

import (
	"strings"
	"testing"

	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
)

// idleTrace is 3 steps of 2×100µs kernels (20µs launch calls) with gap µs
// of GPU idle between them, while the host is in the user's load_batch.
func idleTrace(gap float64) *trace.Trace {
	b := tt.New()
	wall := 240 + gap
	for s := range 3 {
		at := tt.Us(wall * float64(s))
		b.Step(at, at+tt.Us(wall))
		b.Launch("cudaLaunchKernel", at, at+tt.Us(20)).Kernel("gemm_kernel", at+tt.Us(20), at+tt.Us(120))
		b.Frame("train.py(12): load_batch", at+tt.Us(120), at+tt.Us(120+gap))
		b.Launch("cudaLaunchKernel", at+tt.Us(120+gap), at+tt.Us(140+gap)).Kernel("gemm_kernel", at+tt.Us(140+gap), at+tt.Us(240+gap))
	}
	return b.Build()
}

func TestGPUIdleBuilt(t *testing.T) {
	// 800µs steps: the GPU idles from the first kernel's end (120µs) to
	// the second's start (700µs), one 580µs gap a step.
	f := oneFinding(t, idleTrace(560), GPUIdle)
	checkNear(t, "median step", measureOf(t, f, "median step"), 800)
	checkNear(t, "long-gap idle", measureOf(t, f, "long-gap idle per step"), 580)
	if got := f.SavingUs; got <= 0 || got > 580 {
		t.Errorf("saving %v, want a part of the 580µs gap", got)
	}
	// A 170µs wait (190µs of idle) stays under LaunchGap: launch gaps are
	// not gpu-idle's.
	noFinding(t, idleTrace(170), GPUIdle)
}

// TestGPUIdleUnrecordedHostWork: a gap in which the loop's thread records
// nothing (the Python of a .tolist(), no op, frame or range) is host work
// named after the op before it, not credited to the op that ends the gap.
// Each 1000µs step: a 100µs kernel, aten::to until 150µs, nothing until
// the next step's aten::linear at 900µs, whose kernel ends the gap.
func TestGPUIdleUnrecordedHostWork(t *testing.T) {
	b := tt.New()
	for s := range 3 {
		at := tt.Us(1000 * float64(s))
		b.Step(at, at+tt.Us(1000))
		b.Launch("cudaLaunchKernel", at, at+tt.Us(10)).Kernel("gemm_kernel", at+tt.Us(10), at+tt.Us(110))
		b.Op("aten::to", at+tt.Us(20), at+tt.Us(150))
		b.Op("aten::linear", at+tt.Us(900), at+tt.Us(990))
		b.Launch("cudaLaunchKernel", at+tt.Us(950), at+tt.Us(960)).Kernel("gemm_kernel", at+tt.Us(960), at+tt.Us(990))
	}
	f := oneFinding(t, b.Build(), GPUIdle)
	place := "host work with no op recorded, after aten::to"
	if !strings.Contains(f.Fix, place) || strings.Contains(f.Fix, "aten::linear") {
		t.Errorf("fix %q: want the gap named %q, not the op that ends it", f.Fix, place)
	}
	// The 750µs hole is 88 % of the 850µs gap (110→960µs).
	if f.SavingUs < 0.8*850 {
		t.Errorf("saving %.0f µs, want most of the 850µs gap", f.SavingUs)
	}
}

func TestLargestHole(t *testing.T) {
	gap := trace.Span{Start: 0, End: 100}
	for _, c := range []struct {
		covered []trace.Span
		want    trace.Span
	}{
		{nil, trace.Span{Start: 0, End: 100}},
		{[]trace.Span{{Start: 0, End: 100}}, trace.Span{}},
		{[]trace.Span{{Start: 10, End: 20}, {Start: 60, End: 70}}, trace.Span{Start: 20, End: 60}},
		{[]trace.Span{{Start: 0, End: 20}, {Start: 30, End: 40}}, trace.Span{Start: 40, End: 100}},
	} {
		if got := largestHole(gap, c.covered); got.Start != c.want.Start || got.End != c.want.End {
			t.Errorf("largestHole(%v) = %v, want %v", c.covered, got, c.want)
		}
	}
}

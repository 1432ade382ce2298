package analyze

import (
	"testing"

	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
)

// coldTrace is 3 steps running the same 200µs kernel (the host waiting
// for it); the first is first µs long, its extra time a cudaMalloc of
// first − 1000µs after the kernel (the caching allocator growing), the
// others 1000µs.
func coldTrace(first float64) *trace.Trace {
	b := tt.New()
	at := trace.Time(0)
	for s := range 3 {
		wall := 1000.0
		if s == 0 {
			wall = first
		}
		b.Step(at, at+tt.Us(wall))
		end := gpuBound(b, at, kernel{"gemm_kernel", 200})
		if s == 0 {
			b.API("cudaMalloc", end+tt.Us(10), end+tt.Us(10+first-1000))
		}
		at += tt.Us(wall)
	}
	return b.Build()
}

func TestColdStartBuilt(t *testing.T) {
	// 3000µs against 1000µs: 2000µs of excess, 2000µs of it in cudaMalloc
	// (the steady steps make none).
	f := oneFinding(t, coldTrace(3000), ColdStart)
	checkNear(t, "first step", measureOf(t, f, "first step"), 3000)
	checkNear(t, "steady step", measureOf(t, f, "steady-state step"), 1000)
	checkNear(t, "excess", measureOf(t, f, "excess"), 2000)
	checkNear(t, "API excess", measureOf(t, f, "excess in CUDA API calls"), 2000)
	// 1400µs: 1.4× the steady step and 400µs more, under both thresholds.
	noFinding(t, coldTrace(1400), ColdStart)
}

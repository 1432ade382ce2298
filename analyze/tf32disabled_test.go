package analyze

import (
	"testing"

	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
)

// tf32Trace is 3 steps, each a 300µs cuBLAS sgemm and a 100µs elementwise
// kernel the host waits for, on a GPU of compute capability major.
func tf32Trace(major int) *trace.Trace {
	b := tt.New().Meta(func(m *trace.Metadata) {
		m.Devices = []trace.DeviceProperties{{Name: "test GPU", ComputeMajor: major}}
	})
	for s := range 3 {
		at := tt.Us(1000 * float64(s))
		b.Step(at, at+tt.Us(1000))
		gpuBound(b, at, kernel{"ampere_sgemm_128x64_nn", 300}, kernel{"vectorized_elementwise_kernel", 100})
	}
	return b.Build()
}

func TestTF32DisabledBuilt(t *testing.T) {
	// 900µs of sgemm in 1200µs of kernels; no op shapes, so the assumed
	// TF32Speedup: half of 300µs saved a step.
	f := oneFinding(t, tf32Trace(8), TF32Disabled)
	checkNear(t, "FFMA time", measureOf(t, f, "FFMA GEMM time"), 900)
	checkNear(t, "share", measureOf(t, f, "share of GPU kernel time"), 0.75)
	checkNear(t, "saving", f.SavingUs, 300*(1-1/TF32Speedup))
	// A Volta (7.0) has no TF32 tensor cores.
	noFinding(t, tf32Trace(7), TF32Disabled)
}

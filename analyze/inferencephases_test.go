package analyze

import (
	"testing"

	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
)

// generateTrace is 3 steps of 1000µs: a 300µs prefill (a 200µs GEMM the
// host waits for), then 4 decode calls of 150µs, each launching 3 kernels
// of run µs, one every 50µs (20µs calls). A decode call's first launch
// starts where the previous call ends: spans are half-open, so it belongs
// to its own call alone.
func generateTrace(run float64) *trace.Trace {
	b := tt.New()
	for s := range 3 {
		at := tt.Us(1000 * float64(s))
		b.Step(at, at+tt.Us(1000))
		b.Range("prefill", at, at+tt.Us(300))
		gpuBound(b, at, kernel{"ampere_bf16_s16816gemm_bf16_128x64_nn", 200})
		for k := range 4 {
			d := at + tt.Us(300+150*float64(k))
			b.Range("decode", d, d+tt.Us(150))
			train(b, "decode_kernel", d, 3, 50, 20, run)
		}
	}
	return b.Build()
}

func TestInferencePhasesBuilt(t *testing.T) {
	// Each decode call: 150µs of host time owning 3 × 10µs of GPU work.
	f := oneFinding(t, generateTrace(10), InferencePhases)
	checkNear(t, "calls per step", measureOf(t, f, "decode calls per step"), 4)
	checkNear(t, "host per call", measureOf(t, f, "decode host time per call"), 150)
	checkNear(t, "busy per call", measureOf(t, f, "decode GPU busy per call"), 30)
	checkNear(t, "launches per call", measureOf(t, f, "decode launches per call"), 3)
	// 25µs kernels fill half of each call: no longer launch-bound.
	noFinding(t, generateTrace(25), InferencePhases)
}

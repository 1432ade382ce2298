package analyze

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// TestHeadlineMatchesPython checks the steady-state step, GPU busy time and
// kernels per step against testdata/headline.json, which
// testdata/headline.py computes from the trace JSON alone (steps from the
// ProfilerStep#N ranges, kernels placed by their launch call's start, a
// step's window the range or, for asynchronous and CUDA-graph steps, the
// GPU work it launched; busy time as the union of that work's kernel,
// memcpy and memset intervals in the window).
func TestHeadlineMatchesPython(t *testing.T) {
	b, err := os.ReadFile("testdata/headline.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]struct {
		StepNs    float64 `json:"step_ns"`
		GPUBusyNs float64 `json:"gpu_busy_ns"`
		Kernels   float64 `json:"kernels"`
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) < 20 {
		t.Fatalf("headline.json covers %d traces", len(want))
	}
	for name, w := range want {
		ss := run(t, name).StepStats
		// Times are parsed from decimal microseconds to whole ns on both
		// sides; medians of two steps may differ by the rounding of each.
		if math.Abs(ss.SteadyWallUs*1e3-w.StepNs) > 2 || math.Abs(ss.SteadyGPUBusyUs*1e3-w.GPUBusyNs) > 2 || ss.SteadyKernels != w.Kernels {
			t.Errorf("%s: step %vns busy %vns kernels %v; Python %vns %vns %v", name, ss.SteadyWallUs*1e3, ss.SteadyGPUBusyUs*1e3,
				ss.SteadyKernels, w.StepNs, w.GPUBusyNs, w.Kernels)
		}
	}
}

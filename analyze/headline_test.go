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

// TestStepFiguresMatchPython checks the step figures the faces quote in
// prose (fastest and slowest step, their spread over the median, the
// first step over the median of the others, launch calls' share of the
// idle time, launch-call time per launch and the mean kernel of the
// median step) against testdata/headline.py's independent computation.
func TestStepFiguresMatchPython(t *testing.T) {
	b, err := os.ReadFile("testdata/headline.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]struct {
		MinWallNs   float64 `json:"min_wall_ns"`
		MaxWallNs   float64 `json:"max_wall_ns"`
		Spread      float64 `json:"wall_spread"`
		FirstRatio  float64 `json:"first_step_ratio"`
		LaunchShare float64 `json:"launch_api_idle_share"`
		PerLaunchNs float64 `json:"launch_api_per_launch_ns"`
		KernelNs    float64 `json:"kernel_mean_ns"`
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	warm := 0
	for name, w := range want {
		ss := run(t, name).StepStats
		near := func(what string, got, want, tol float64) {
			if math.Abs(got-want) > tol {
				t.Errorf("%s: %s %v, Python %v", name, what, got, want)
			}
		}
		near("fastest step ns", ss.MinWallUs*1e3, w.MinWallNs, 2)
		near("slowest step ns", ss.MaxWallUs*1e3, w.MaxWallNs, 2)
		near("spread", ss.WallSpread, w.Spread, 1e-6)
		near("first step ratio", ss.FirstStepRatio, w.FirstRatio, 1e-6)
		near("launch calls' share of idle", ss.SteadyLaunchAPIIdleShare, w.LaunchShare, 1e-4)
		near("launch-call time per launch ns", ss.SteadyLaunchAPIPerLaunchUs*1e3, w.PerLaunchNs, 1)
		near("mean kernel ns", ss.SteadyKernelMeanUs*1e3, w.KernelNs, 1)
		if ss.WarmUp != (w.FirstRatio > WarmUpRatio) {
			t.Errorf("%s: warm-up %v with Python's first step ratio %v", name, ss.WarmUp, w.FirstRatio)
		}
		if ss.WarmUp {
			warm++
		}
	}
	// The fixtures hold traces with and without warm-up: both branches
	// of every face's wording are exercised.
	if warm == 0 || warm == len(want) {
		t.Errorf("%d of %d traces have warm-up", warm, len(want))
	}
}

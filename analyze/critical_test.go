package analyze

import (
	"strings"
	"testing"
)

// criticalExpected is one trace's entry in critical.json, written by
// fixtures/recorded/expect/critical.py (stdlib Python over the JSON).
type criticalExpected struct {
	Steps       int                   `json:"steps"`
	GPUBound    float64               `json:"gpu_bound"`
	ShareByName map[string][2]float64 `json:"share_by_name"`
}

// TestGPUTimeSavingsOnTheCriticalPath: a saving out of GPU busy time
// shortens the step only by the part of the kernels' time during which
// the GPU was the bottleneck. Host-bound traces (fp64_simulation,
// transformer_naive_attn: the host queues every kernel after the previous
// ends) save no step time by making kernels faster; GPU-bound ones
// (fusedlinear_naive) nearly all of it; launch calls a fix removes save
// step time where the host is the bottleneck (the complement). Expected
// values: critical.py.
func TestGPUTimeSavingsOnTheCriticalPath(t *testing.T) {
	var want map[string]criticalExpected
	readExpected(t, "critical.json", &want)
	checked := 0
	for name, e := range want {
		t.Run(name, func(t *testing.T) {
			r := run(t, name)
			ss := r.StepStats
			if bound := min(e.GPUBound, ss.SteadyGPUBusyUs); !near(ss.SteadyGPUBoundUs, bound) {
				t.Errorf("GPU-bound time per step %.3f µs, want %.3f (busy %.3f)", ss.SteadyGPUBoundUs, bound, ss.SteadyGPUBusyUs)
			}
			for _, f := range r.Findings {
				if f.SavingFrom != FromKernelTime {
					if f.GPUSavingUs != 0 {
						t.Errorf("%s: GPU saving %.1f on an idle-time finding", f.ID, f.GPUSavingUs)
					}
					continue
				}
				if gpuPart := f.SavingUs - f.launchUs; gpuPart > f.GPUSavingUs+1e-9 || gpuPart > ss.SteadyGPUBoundUs+1e-9 {
					t.Errorf("%s: saves %.2f µs of the step, more than its GPU time %.2f or the GPU-bound time %.2f", f.ID, f.SavingUs, f.GPUSavingUs, ss.SteadyGPUBoundUs)
				}
				var names []string
				for _, ev := range f.Evidence {
					names = append(names, ev.Kernels...)
				}
				if f.activities != nil || len(names) == 0 {
					continue
				}
				var crit, total float64
				seen := map[string]bool{}
				for _, n := range names {
					if !seen[n] {
						seen[n] = true
						crit += e.ShareByName[n][0]
						total += e.ShareByName[n][1]
					}
				}
				if total == 0 {
					continue
				}
				share := crit / total
				wantSaving := min(f.GPUSavingUs*share, e.GPUBound) + min(f.launchUs*(1-share), ss.SteadyGPUIdleUs)
				if !near(f.SavingUs, wantSaving) && abs(f.SavingUs-wantSaving) > 0.05 {
					t.Errorf("%s: saves %.3f µs of the step, want %.3f (GPU time %.3f × critical share %.4f)", f.ID, f.SavingUs, wantSaving, f.GPUSavingUs, crit/total)
				}
				checked++
				if crit/total < CriticalNoteBelow && !strings.Contains(evidenceText(f), "bottleneck for only") {
					t.Errorf("%s: critical share %.2f without the evidence saying so", f.ID, crit/total)
				}
			}
		})
	}
	if checked < 3 {
		t.Errorf("only %d findings checked against critical.py: the test proves little", checked)
	}
	// The class: GPU-time fixes on host-bound steps save no step time.
	for _, name := range []string{"recorded/fp64_simulation.json.gz", "recorded/transformer_naive_attn.json.gz"} {
		r := run(t, name)
		for _, f := range r.Findings {
			if f.SavingFrom == FromKernelTime && (f.SavingUs-f.launchUs > 0.01*f.GPUSavingUs || f.GPUSavingUs <= 0) {
				t.Errorf("%s: %s saves %.1f µs of a host-bound step (GPU time %.1f)", name, f.ID, f.SavingUs, f.GPUSavingUs)
			}
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

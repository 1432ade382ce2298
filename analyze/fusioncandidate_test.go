package analyze

import (
	"testing"

	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
)

// fusionTrace is 3 steps of 1000µs, each the user's forward (model.py:30)
// running three ops on 1024×1024 fp32 tensors, each launching (20µs call)
// a 40µs kernel right after its call, so 20µs launch gaps separate them:
// aten::mul, middle, aten::relu.
func fusionTrace(middle, kernel string) *trace.Trace {
	b := tt.New()
	ops := []struct{ op, kernel string }{{"aten::mul", "elementwise_kernel<mul>"}, {middle, kernel}, {"aten::relu", "elementwise_kernel<relu>"}}
	for s := range 3 {
		at := tt.Us(1000 * float64(s))
		b.Step(at, at+tt.Us(1000))
		b.Frame("model.py(30): forward", at, at+tt.Us(200))
		for i, o := range ops {
			c := at + tt.Us(60*float64(i))
			b.Op(o.op, c, c+tt.Us(20)).Inputs("[[1024, 1024], [1024, 1024]]", `["float", "float"]`)
			b.Launch("cudaLaunchKernel", c, c+tt.Us(20)).Kernel(o.kernel, c+tt.Us(20), c+tt.Us(60))
		}
	}
	return b.Build()
}

func TestFusionCandidateBuilt(t *testing.T) {
	f := oneFinding(t, fusionTrace("aten::add", "elementwise_kernel<add>"), FusionCandidate)
	checkNear(t, "kernels", measureOf(t, f, "kernels in the chain"), 3)
	checkNear(t, "occurrences", measureOf(t, f, "occurrences"), 3)
	checkNear(t, "per step", measureOf(t, f, "occurrences per step"), 1)
	checkNear(t, "GPU time", measureOf(t, f, "GPU time per step"), 120)
	checkNear(t, "idle between", measureOf(t, f, "GPU idle between the chain's kernels per step"), 40)
	checkNear(t, "span", measureOf(t, f, "chain span per step"), 160)
	// Two 4 MiB intermediates written and read back (16 MiB) at the
	// fallback 1000 GB/s: 16.78µs, under the 80µs the shorter kernels take.
	checkNear(t, "GPU saved", measureOf(t, f, "GPU time saved per step"), float64(16<<20)/(fallbackGBps*1e9)*1e6)
	// Two launches saved, each the 20µs median call, each gap 20µs idle.
	checkNear(t, "gaps removed", measureOf(t, f, "launch gaps removed per step"), 40)
	// A GEMM in the middle: two single kernels, no chain.
	noFinding(t, fusionTrace("aten::mm", "ampere_sgemm_128x64_nn"), FusionCandidate)
}

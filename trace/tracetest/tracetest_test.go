package tracetest

import (
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// TestBuildLinks checks the links analyzers rely on: a kernel's launch
// call, the call's first kernel, op parents, and the op and frame around
// a call — whatever order the events were added in.
func TestBuildLinks(t *testing.T) {
	b := New().Step(0, Us(100))
	b.Launch("cudaLaunchKernel", Us(12), Us(14)).Kernel("k2", Us(40), Us(50))
	b.Frame("model.py(3): forward", Us(5), Us(30))
	b.Op("aten::mm", Us(11), Us(20)).Inputs("[[2, 3], [3, 4]]", `["float", "float"]`)
	b.Op("aten::linear", Us(10), Us(25))
	b.Launch("cudaLaunchKernel", Us(15), Us(16)).Kernel("k1", Us(20), Us(30)).
		Device(0, 8).Launch("cudaMemcpyAsync", Us(17), Us(18)).Copy(trace.HtoD, trace.Pageable, trace.Device, 1<<20, Us(30), Us(32))
	b.API("cudaStreamSynchronize", Us(40), Us(60))
	tr := b.Build()

	if len(tr.GPU) != 3 || tr.GPU[0].Name != "k1" || tr.GPU[1].Name != "k2" || tr.GPU[2].Kind != trace.Memcpy {
		t.Fatalf("GPU not sorted by (device, stream, start): %+v", tr.GPU)
	}
	for i, g := range tr.GPU {
		if g.Launch == trace.None || tr.APICalls[g.Launch].Correlation != g.Correlation || tr.APICalls[g.Launch].FirstGPU != trace.Index(i) {
			t.Errorf("%s: launch link %d", g.Name, g.Launch)
		}
	}
	mm := tr.LaunchOp(1) // k2's launch at 12µs is inside aten::mm inside aten::linear
	if mm == trace.None || tr.Ops[mm].Name != "aten::mm" || tr.Ops[tr.Ops[mm].Parent].Name != "aten::linear" {
		t.Fatalf("k2's op: %d", mm)
	}
	if f := tr.LaunchFrame(1); f == trace.None || tr.Frames[f].Name != "model.py(3): forward" {
		t.Errorf("k2's frame: %d", f)
	}
	if last := tr.APICalls[len(tr.APICalls)-1]; last.Name != "cudaStreamSynchronize" || last.Op != trace.None || last.FirstGPU != trace.None {
		t.Errorf("sync call: %+v", last)
	}
	if len(tr.Steps) != 1 || tr.StepOf(Us(50)) != 0 {
		t.Errorf("steps: %+v", tr.Steps)
	}
}

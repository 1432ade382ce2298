package analyze

import (
	"testing"

	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
)

// hostSyncTrace is 3 steps of 1000µs: a 400µs kernel launched at the
// start (20µs call, runs 20→420µs), a cudaStreamSynchronize from 40µs to
// 430µs (inside aten::item when inOp, else bare), then a second launch
// (460→480µs) whose kernel runs 480→880µs.
func hostSyncTrace(inOp bool) *trace.Trace {
	b := tt.New()
	for s := range 3 {
		at := tt.Us(1000 * float64(s))
		b.Step(at, at+tt.Us(1000))
		b.Launch("cudaLaunchKernel", at, at+tt.Us(20)).Kernel("gemm_kernel", at+tt.Us(20), at+tt.Us(420))
		if inOp {
			b.Op("aten::item", at+tt.Us(30), at+tt.Us(450))
		}
		b.API("cudaStreamSynchronize", at+tt.Us(40), at+tt.Us(430))
		b.Launch("cudaLaunchKernel", at+tt.Us(460), at+tt.Us(480)).Kernel("gemm_kernel", at+tt.Us(480), at+tt.Us(880))
	}
	return b.Build()
}

func TestHostSyncBuilt(t *testing.T) {
	// Each sync blocks while the GPU idles 420→430µs (10µs), and the GPU
	// then idles until the next kernel at 480µs (50µs refill, under the
	// 380µs of GPU work the sync waited through): 60µs a step blocked.
	// But the step is host-bound: 1000µs of host period for 800µs of GPU
	// work. Without the 390µs the host waits in the sync, its work ends at
	// 610µs and the GPU's 800µs bound the step: 200µs a step.
	f := oneFinding(t, hostSyncTrace(true), HostSync)
	checkNear(t, "syncs per step", measureOf(t, f, "syncs per step"), 1)
	checkNear(t, "blocked in total", measureOf(t, f, "blocked in total"), 3*60)
	checkNear(t, "saving", f.SavingUs, 200)
	// With a third kernel (880→990µs) the GPU works 910µs of the 1000µs
	// step: taking the sync's 390µs out of the host's work leaves the GPU
	// bounding the step, so the saving is the host's lead, 90µs.
	b := tt.New()
	for s := range 3 {
		at := tt.Us(1000 * float64(s))
		b.Step(at, at+tt.Us(1000))
		b.Launch("cudaLaunchKernel", at, at+tt.Us(20)).Kernel("gemm_kernel", at+tt.Us(20), at+tt.Us(420))
		b.Op("aten::item", at+tt.Us(30), at+tt.Us(450))
		b.API("cudaStreamSynchronize", at+tt.Us(40), at+tt.Us(430))
		b.Launch("cudaLaunchKernel", at+tt.Us(460), at+tt.Us(480)).Kernel("gemm_kernel", at+tt.Us(480), at+tt.Us(880))
		b.Launch("cudaLaunchKernel", at+tt.Us(490), at+tt.Us(500)).Kernel("gemm_kernel", at+tt.Us(880), at+tt.Us(990))
	}
	checkNear(t, "saving bound by the GPU", oneFinding(t, b.Build(), HostSync).SavingUs, 90)
	if f.Subject != "aten::item" {
		t.Errorf("subject %q, want the op behind the sync", f.Subject)
	}
	// The same sync outside any op, before the step's last launch, is
	// still a mid-step sync; after the last launch it is a deliberate
	// end-of-step torch.cuda.synchronize().
	b = tt.New()
	for s := range 3 {
		at := tt.Us(1000 * float64(s))
		b.Step(at, at+tt.Us(1000))
		b.Launch("cudaLaunchKernel", at, at+tt.Us(20)).Kernel("gemm_kernel", at+tt.Us(20), at+tt.Us(420))
		b.API("cudaDeviceSynchronize", at+tt.Us(40), at+tt.Us(430))
	}
	noFinding(t, b.Build(), HostSync)
}

package analyze

import (
	"testing"

	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
)

// customGEMMTrace is 3 steps of 1000µs, each one 500µs naive_gemm_kernel
// (grid 64, block 256) with shared bytes of shared memory a block, the
// host waiting for it.
func customGEMMTrace(shared int32) *trace.Trace {
	b := tt.New()
	for s := range 3 {
		at := tt.Us(1000 * float64(s))
		b.Step(at, at+tt.Us(1000))
		gpuBound(b, at, kernel{"naive_gemm_kernel", 500})
		b.LastGPU(func(g *trace.GPUActivity) {
			g.Grid, g.Block, g.SharedMem = [3]int32{64, 1, 1}, [3]int32{256, 1, 1}, shared
		})
	}
	return b.Build()
}

func TestCustomGEMMBuilt(t *testing.T) {
	// The only kernel: 3 calls of 500µs, all of GPU kernel time, untiled.
	f := oneFinding(t, customGEMMTrace(0), CustomGEMM)
	checkNear(t, "calls", measureOf(t, f, "calls"), 3)
	checkNear(t, "mean time", measureOf(t, f, "mean time"), 500)
	checkNear(t, "share", measureOf(t, f, "share of GPU kernel time"), 1)
	// 500µs a step × (1 − 1/CustomGEMMSpeedup), all on the critical path
	// (the host waits for it).
	checkNear(t, "saving", f.SavingUs, 500*(1-1/CustomGEMMSpeedup))
	// Tiled through shared memory: a kernel a person tuned.
	noFinding(t, customGEMMTrace(8192), CustomGEMM)
}

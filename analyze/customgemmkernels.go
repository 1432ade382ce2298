package analyze

import (
	"github.com/tracelens/tracelens/trace"
)

// CustomGEMMKernels picks the hand-written GEMM kernels custom-gemm
// reports (see its Doc), so same-work-slower can leave them to it without
// reading its findings. It reads the metrics' kernel table.
var CustomGEMMKernels = &Analyzer{
	Name:     "custom-gemm-kernels",
	Doc:      "Picks the kernels custom-gemm judges hand-written, untiled GEMM work (the Doc of custom-gemm says by which rules).",
	Requires: []*Analyzer{Attribution},
	Fact: func(p *Pass) (any, error) {
		c := &CustomGEMMFacts{}
		if p.Result.Summary.GPUKernelUs == 0 {
			return c, nil
		}
		for i := range p.Result.Kernels {
			if k, ok := customGEMMKernel(p, &p.Result.Kernels[i]); ok {
				c.kernels = append(c.kernels, k)
			}
		}
		return c, nil
	},
}

// CustomGEMMFacts is the result of CustomGEMMKernels.
type CustomGEMMFacts struct {
	kernels []customKernel
}

// customKernel is a hand-written GEMM kernel: its row in Result.Kernels,
// its first GPU activity g, the op that launched it, whether a name says
// GEMM (byName) and a launch whose arguments the trace recorded.
type customKernel struct {
	k      *Kernel
	g      int
	opName string
	byName bool
	launch *trace.GPUActivity
}

// customGEMMFacts returns the CustomGEMMKernels fact p's analyzer requires.
func (p *Pass) customGEMMFacts() (*CustomGEMMFacts, error) {
	return FactOf[*CustomGEMMFacts](p, CustomGEMMKernels)
}

// Has reports whether the kernel called name is a hand-written GEMM.
func (c *CustomGEMMFacts) Has(name string) bool {
	for _, k := range c.kernels {
		if k.k.Name == name {
			return true
		}
	}
	return false
}

// customGEMMKernel judges kernel k by custom-gemm's rules.
func customGEMMKernel(p *Pass, k *Kernel) (customKernel, bool) {
	t, ix := p.Trace, p.ix
	if k.Autotune || LibraryKernel(k.Name) || k.Category == CategoryTriton || compilerFused(k.Name) || k.Share < CustomGEMMMinShare {
		return customKernel{}, false
	}
	g := -1
	for i := range t.GPU {
		if t.GPU[i].Name == k.Name {
			g = i
			break
		}
	}
	if g < 0 {
		return customKernel{}, false
	}
	opName := ""
	if op := ix.opOf(g); op != -1 {
		opName = t.Ops[op].Name
	}
	byName := gemmLikeName(k.Name) || gemmLikeName(opName)
	// By weight alone only under a framework op that is not
	// elementwise: a native program's dominant kernel (a hash join, a
	// saxpy) is no evidence of a matrix multiply.
	if !byName && (k.Share < CustomGEMMDominantShare || k.MeanUs < CustomGEMMMinMeanUs || memoryBound(k.Category) || opName == "") {
		return customKernel{}, false
	}
	a, ok := launchEvidence(t, k.Name)
	if !ok || a.SharedMem != 0 {
		// Tiled through shared memory: no evidence it is naive. And
		// a trace that does not record launch arguments (ROCm, graph
		// replays: grid [0 0 0]) says nothing about tiling: missing
		// is not zero.
		return customKernel{}, false
	}
	return customKernel{k: k, g: g, opName: opName, byName: byName, launch: a}, true
}

// launchEvidence returns a launch of the named kernel whose arguments the
// trace recorded (a non-zero grid or block), preferring one that used
// shared memory, and false when no launch of it has any.
func launchEvidence(t *trace.Trace, name string) (*trace.GPUActivity, bool) {
	var found *trace.GPUActivity
	for i := range t.GPU {
		a := &t.GPU[i]
		if a.Name != name || a.Grid == [3]int32{} && a.Block == [3]int32{} {
			continue
		}
		if found == nil || a.SharedMem > found.SharedMem {
			found = a
		}
	}
	return found, found != nil
}

package analyze

import (
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// OpClasses classifies every op by what its name says, for the tests
// analyzers make along an op's enclosing ops, and keeps each op's parent
// beside it. A walk up the op tree then reads two dense slices that stay
// in cache instead of the ops themselves (96 bytes each, spread over tens
// of megabytes: on a trace of 300 k ops the walks of fusion-candidate
// alone waited on memory for 10 ms).
var OpClasses = &Analyzer{
	Name: "op-classes",
	Doc: "Classifies every op by what its name says (torch.compile's runtime, autograd nodes and gradient accumulation, collectives, " +
		"framework ops, a few ATen ops by name), each distinct name tested once, and keeps each op's parent beside it, chunk by chunk side by side.",
	Requires: []*Analyzer{HostTable},
	Fact: func(p *Pass) (any, error) {
		host, err := hostTableOf(p)
		if err != nil {
			return nil, err
		}
		return newOpClasses(host), nil
	},
	NoMetrics: true,
}

// opClass is a set of what an op's name says (the opIs* bits).
type opClass uint16

// What an op's name says.
const (
	// opIsCompiled: torch.compile's runtime or autotuner (compiledOpName).
	opIsCompiled opClass = 1 << iota
	// opIsCompiledRun: a compiled region or function running
	// (compiledIn's test).
	opIsCompiledRun
	// opIsAccumulateGrad: the name contains AccumulateGrad.
	opIsAccumulateGrad
	// opIsCommunication: a collective's op (communicationOp).
	opIsCommunication
	// opIsFramework: an ATen op or autograd node (frameworkOp).
	opIsFramework
	// opIsBackward: the name contains Backward (an autograd node).
	opIsBackward
	// opIsContiguous, opIsToCopy and opIsAccumulateGradNode: exactly
	// aten::contiguous, aten::_to_copy and torch::autograd::AccumulateGrad.
	opIsContiguous
	opIsToCopy
	opIsAccumulateGradNode
)

// classifyOp returns what an op named n says.
func classifyOp(n string) opClass {
	var c opClass
	set := func(bit opClass, ok bool) {
		if ok {
			c |= bit
		}
	}
	set(opIsCompiled, compiledOpName(n))
	set(opIsCompiledRun, strings.HasPrefix(n, "Torch-Compiled Region") || strings.Contains(n, "CompiledFunction"))
	set(opIsAccumulateGrad, strings.Contains(n, "AccumulateGrad"))
	set(opIsCommunication, communicationOp(n))
	set(opIsFramework, frameworkOp(n))
	set(opIsBackward, strings.Contains(n, "Backward"))
	set(opIsContiguous, n == "aten::contiguous")
	set(opIsToCopy, n == "aten::_to_copy")
	set(opIsAccumulateGradNode, n == "torch::autograd::AccumulateGrad")
	return c
}

// OpClassFacts is the result of OpClasses.
type OpClassFacts struct {
	class  []opClass
	parent []trace.Index
}

// opClasses returns the OpClasses fact p's analyzer requires.
func (p *Pass) opClasses() (*OpClassFacts, error) {
	return FactOf[*OpClassFacts](p, OpClasses)
}

// newOpClasses classifies the ops of a HostTable by their name column
// (each distinct name once), chunk by chunk side by side; the parents
// are the table's column, shared (only read).
func newOpClasses(host *hostTable) *OpClassFacts {
	ops := &host.ops
	f := &OpClassFacts{class: make([]opClass, len(ops.name)), parent: ops.parent}
	classes := byName(ops, classifyOp)
	inChunks(len(ops.name), func(lo, hi int) {
		for i, n := range ops.name[lo:hi] {
			f.class[lo+i] = classes[n]
		}
	})
	return f
}

// has reports whether op's name says any of what.
func (f *OpClassFacts) has(op trace.Index, what opClass) bool { return f.class[op]&what != 0 }

// enclosing returns op or the innermost op enclosing it whose name says
// any of what, or trace.None.
func (f *OpClassFacts) enclosing(op trace.Index, what opClass) trace.Index {
	for ; op != trace.None; op = f.parent[op] {
		if f.class[op]&what != 0 {
			return op
		}
	}
	return trace.None
}

// root returns the outermost op enclosing op (op itself at the top).
func (f *OpClassFacts) root(op trace.Index) trace.Index {
	for f.parent[op] != trace.None {
		op = f.parent[op]
	}
	return op
}

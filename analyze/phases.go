package analyze

import (
	"github.com/tracelens/tracelens/parallel"
	"github.com/tracelens/tracelens/trace"

	"cmp"
	"slices"
	"strings"
)

// Phases of a training step a kernel can belong to.
const (
	PhaseForward   = "forward"
	PhaseBackward  = "backward"
	PhaseOptimizer = "optimizer"
)

// phase tells which part of a training step launched each GPU activity.
// Autograd runs backward on its own thread, so neither the step's
// thread nor a user's record_function("backward") range sees those
// launches; what marks them is the op the engine wraps every backward
// node in (autograd::engine::evaluate_function: MmBackward0, ...), which
// the profiler records on that thread around the launch (the same op
// the fwd-bwd flow arrows and sequence numbers point at). The optimizer
// is what runs inside torch.optim's own ranges (Optimizer.step#AdamW.step,
// Optimizer.zero_grad#...) on the launching thread. Everything else is
// forward (data movement and loss included).
type phase uint8

const (
	forward phase = iota
	backward
	optimizer
)

func (p phase) String() string {
	switch p {
	case backward:
		return PhaseBackward
	case optimizer:
		return PhaseOptimizer
	}
	return PhaseForward
}

// backwardOp reports whether an op is autograd's wrapper of a backward
// node (eager autograd, or AOTAutograd's compiled backward).
func backwardOp(name string) bool {
	return strings.HasPrefix(name, "autograd::engine::evaluate_function") || strings.HasPrefix(name, "CompiledFunctionBackward")
}

// optimizerRange reports whether a record_function range is torch.optim's
// own (its step and zero_grad hooks name them Optimizer.step#Class.step).
func optimizerRange(name string) bool {
	return strings.HasPrefix(name, "Optimizer.step#") || strings.HasPrefix(name, "Optimizer.zero_grad#")
}

// phases returns the phase of every GPU activity of t, classified once
// per launching op (ops: the ops' HostTable columns).
func phases(t *trace.Trace, ops *spanColumns, attr *AttributionFacts) []phase {
	out := make([]phase, len(t.GPU))
	opt := threadSpans{}
	for i := range t.Annotations {
		if a := &t.Annotations[i]; !a.GPU && optimizerRange(a.Name) {
			opt.add(a.Thread, a.Span)
		}
	}
	opt.merge()
	// Each chunk of activities keeps its own answers per op (a byte an
	// op: a map of one entry per launching op was most of the fact).
	isBackward := byName(ops, backwardOp)
	inChunks(len(t.GPU), func(lo, hi int) {
		bwd := backwardOps{ops: ops, backward: isBackward, memo: make([]uint8, len(t.Ops))}
		for g := lo; g < hi; g++ {
			if op := attr.opOf(g); op != trace.None && bwd.of(op) {
				out[g] = backward
				continue
			}
			if l := t.GPU[g].Launch; l != trace.None && opt.contains(t.APICalls[l].Thread, t.APICalls[l].Start) {
				out[g] = optimizer
			}
		}
	})
	return out
}

// backwardOps answers whether an op is or runs inside a backward op,
// memoising each op on the walks up: 0 not known yet, 1 no, 2 yes.
type backwardOps struct {
	// ops are the ops' columns, backward backwardOp of each name number.
	ops      *spanColumns
	backward []bool
	memo     []uint8
}

// of reports whether op or an op around it is autograd's wrapper of a
// backward node. An op between op and the first backward op found is
// inside it; with none, no op on the walk is inside one.
func (b *backwardOps) of(op trace.Index) bool {
	v := uint8(1)
	cur := op
	for ; cur != trace.None; cur = b.ops.parent[cur] {
		if m := b.memo[cur]; m != 0 {
			v = m
			break
		}
		if b.backward[b.ops.name[cur]] {
			v = 2
			break
		}
	}
	for x := op; x != cur; x = b.ops.parent[x] {
		b.memo[x] = v
	}
	if cur != trace.None {
		b.memo[cur] = v
	}
	return v == 2
}

// phaseSteps fills each step's kernel time per phase and the medians over
// the steady-state steps.
func (ix *index) phaseSteps(r *Result) {
	t := ix.t
	for g := range t.GPU {
		st := ix.gpuStep[g]
		if st < 0 || t.GPU[g].Kind != trace.Kernel {
			continue
		}
		s := &r.Steps[st]
		d := us(t.GPU[g].Dur())
		if ix.category(g) == CategoryCommunication {
			// A rank's communication kernel spinning for a peer is
			// waiting, not work of its phase.
			d = us(t.GPU[g].Dur() - ix.peerWaitIn(t.GPU[g].Span))
		}
		switch ix.phase[g] {
		case backward:
			s.BackwardUs += d
		case optimizer:
			s.OptimizerUs += d
		default:
			s.ForwardUs += d
		}
	}
	steady := steadySteps(r)
	ss := &r.StepStats
	ss.MedianForwardUs = medianOf(steady, func(s *Step) float64 { return s.ForwardUs })
	ss.MedianBackwardUs = medianOf(steady, func(s *Step) float64 { return s.BackwardUs })
	ss.MedianOptimizerUs = medianOf(steady, func(s *Step) float64 { return s.OptimizerUs })
}

// backwardLaunches lets a host range count the backward kernels it
// caused on autograd's thread: per thread and over all threads, the
// launch starts of backward GPU activities in order and the running
// total of their GPU time and kernel count.
type backwardLaunches struct {
	all      launchRun
	byThread map[trace.Index]*launchRun
}

type launchRun struct {
	at     []trace.Time
	gpu    []trace.Duration // gpu[i] = time launched by the first i
	kernel []int32
}

func (lr *launchRun) in(from, to trace.Time) (trace.Duration, int) {
	lo, _ := slices.BinarySearch(lr.at, from)
	hi, _ := slices.BinarySearch(lr.at, to+1)
	return lr.gpu[hi] - lr.gpu[lo], int(lr.kernel[hi] - lr.kernel[lo])
}

func (ix *index) backwardLaunches() *backwardLaunches {
	t := ix.t
	type launch struct {
		at     trace.Time
		th     trace.Index
		d      trace.Duration
		kernel bool
	}
	var ls []launch
	for g := range t.GPU {
		if ix.phase[g] != backward || t.GPU[g].Launch == trace.None {
			continue
		}
		c := &t.APICalls[t.GPU[g].Launch]
		ls = append(ls, launch{c.Start, c.Thread, t.GPU[g].Dur(), t.GPU[g].Kind == trace.Kernel})
	}
	slices.SortFunc(ls, func(a, b launch) int { return cmp.Compare(a.at, b.at) })
	bl := &backwardLaunches{all: launchRun{gpu: []trace.Duration{0}, kernel: []int32{0}}, byThread: map[trace.Index]*launchRun{}}
	add := func(lr *launchRun, l launch) {
		k := int32(0)
		if l.kernel {
			k = 1
		}
		lr.at = append(lr.at, l.at)
		lr.gpu = append(lr.gpu, lr.gpu[len(lr.gpu)-1]+l.d)
		lr.kernel = append(lr.kernel, lr.kernel[len(lr.kernel)-1]+k)
	}
	for _, l := range ls {
		add(&bl.all, l)
		lr := bl.byThread[l.th]
		if lr == nil {
			lr = &launchRun{gpu: []trace.Duration{0}, kernel: []int32{0}}
			bl.byThread[l.th] = lr
		}
		add(lr, l)
	}
	return bl
}

// causedElsewhere returns the GPU time and kernels of backward launches
// made during [from, to] on threads other than th: the work a range on th
// (a user's record_function("backward") around loss.backward(), the
// training step) caused on autograd's thread.
func (bl *backwardLaunches) causedElsewhere(th trace.Index, from, to trace.Time) (trace.Duration, int) {
	d, k := bl.all.in(from, to)
	if own := bl.byThread[th]; own != nil {
		od, ok := own.in(from, to)
		d, k = d-od, k-ok
	}
	return d, k
}

// Phases is the fact of what part of a step launched each GPU activity
// (forward, backward, optimizer), which activities torch.compile's
// compiler or autotuner launched, and GPU busy split into compute and
// communication.
var Phases = &Analyzer{
	Name:     "phases",
	Doc:      "Marks each GPU activity forward, backward (autograd's evaluate_function ops, on any thread) or optimizer (Optimizer.step#/zero_grad# ranges); marks the launches torch.compile's compiler and autotuner made; splits GPU busy time into compute and communication (NCCL/RCCL) unions.",
	Requires: []*Analyzer{Attribution, KernelCategories, HostTable},
	Fact: func(p *Pass) (any, error) {
		t := p.Trace
		host, err := hostTableOf(p)
		if err != nil {
			return nil, err
		}
		// The three parts read only the trace and the facts: side by
		// side (the fact was the longest of the facts on 16 cores).
		f := &PhaseFacts{}
		parallel.Each(3, func(i int) {
			switch i {
			case 0:
				f.autotune = autotuneLaunches(t, host)
			case 1:
				f.phase = phases(t, &host.ops, p.ix.AttributionFacts)
			default:
				f.comm = splitBusy(t, p.ix.CategoryFacts)
			}
		})
		return f, nil
	},
}

// PhaseFacts is the result of Phases.
type PhaseFacts struct {
	// phase of each GPU activity; autotune marks compile/autotune
	// launches (nil when there is none); comm splits busy time (nil
	// without communication kernels).
	phase    []phase
	autotune []bool
	comm     *commBusy
}

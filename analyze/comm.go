package analyze

import (
	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/trace"
)

// commBusy splits GPU busy time into communication (NCCL/RCCL collective
// kernels) and compute (everything else: kernels, memcpy, memset), each
// the union of its intervals per device. A collective kernel that waits
// for a slower rank keeps the GPU "busy" without computing anything, so
// the two are reported apart. Only the communication union is kept (the
// sync-site analysis asks what it covers); of compute only its length is
// read, so its union (most of the GPU's intervals) is dropped once
// measured (issue 27).
type commBusy struct {
	comm      *BusyFacts
	computeUs float64
}

// splitBusy builds the two unions, or nil when the trace has no
// communication kernels (then compute is all of busy).
func splitBusy(t *trace.Trace, cat *CategoryFacts) *commBusy {
	hasComm := false
	for g := range t.GPU {
		if cat.category(g) == CategoryCommunication {
			hasComm = true
			break
		}
	}
	if !hasComm {
		return nil
	}
	// Of compute only the length is read: summed as it is merged.
	var compute trace.Duration
	notComm := func(g int) bool { return cat.category(g) != CategoryCommunication }
	for _, runs := range deviceRuns(t.GPU) {
		mergeRuns(t.GPU, runs, notComm, func(b interval.Bounds) { compute += b.Dur() })
	}
	return &commBusy{comm: busyWhere(t, cat, true), computeUs: us(compute)}
}

// busyWhere is the union per device of the GPU activities that are
// (comm) or are not communication kernels, merged where they lie
// (mergeRuns).
func busyWhere(t *trace.Trace, cat *CategoryFacts, comm bool) *BusyFacts {
	sub := &BusyFacts{busy: map[int32][]interval.Bounds{}}
	keep := func(g int) bool { return (cat.category(g) == CategoryCommunication) == comm }
	for dev, runs := range deviceRuns(t.GPU) {
		n := 0
		for _, r := range runs {
			for g := r.lo; g < r.hi; g++ {
				if keep(g) {
					n++
				}
			}
		}
		if n > 0 {
			sub.busy[dev] = unionRuns(t.GPU, runs, keep, n)
			sub.devices = append(sub.devices, dev)
		}
	}
	return sub
}

// totalUs is the busy time of all devices together, in µs.
func (b *BusyFacts) totalUs() float64 {
	var d trace.Duration
	for _, spans := range b.busy {
		for _, sp := range spans {
			d += sp.Dur()
		}
	}
	return us(d)
}

// commSteps fills the compute/communication split of GPU busy per step
// and for the whole trace.
func (ix *index) commSteps(r *Result) {
	cb := ix.comm
	s := &r.Summary
	if cb == nil {
		s.ComputeBusyUs = s.GPUBusyUs
		for i := range r.Steps {
			r.Steps[i].ComputeBusyUs = r.Steps[i].GPUBusyUs
		}
		return
	}
	// Per step, steps() splits the work each step launched (stepWorks).
	s.ComputeBusyUs, s.CommunicationUs = cb.computeUs, cb.comm.totalUs()
}

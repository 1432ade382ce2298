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
	return &commBusy{comm: busyWhere(t, cat, true), computeUs: busyWhere(t, cat, false).totalUs()}
}

// busyWhere is the union per device of the GPU activities that are (comm)
// or are not communication kernels.
func busyWhere(t *trace.Trace, cat *CategoryFacts, comm bool) *BusyFacts {
	sub := &BusyFacts{busy: map[int32][]interval.Bounds{}}
	all := map[int32][]trace.Span{}
	// Each device's spans sized once (counted first): appended one by
	// one, a million of them left twice their size in garbage.
	n := map[int32]int{}
	for g := range t.GPU {
		if (cat.category(g) == CategoryCommunication) == comm {
			n[t.GPU[g].Device]++
		}
	}
	for dev, k := range n {
		all[dev] = make([]trace.Span, 0, k)
	}
	for g := range t.GPU {
		if (cat.category(g) == CategoryCommunication) == comm {
			a := &t.GPU[g]
			all[a.Device] = append(all[a.Device], a.Span)
		}
	}
	for dev, spans := range all {
		// spans is this loop's own: merged in place, not copied
		// first (a second 32 MB of spans at 1 M kernels).
		sub.busy[dev] = interval.BoundsOf(unionSpans(spans))
		delete(all, dev)
		sub.devices = append(sub.devices, dev)
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

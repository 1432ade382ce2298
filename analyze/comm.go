package analyze

import (
	"github.com/tracelens/tracelens/trace"
)

// commBusy splits GPU busy time into communication (NCCL/RCCL collective
// kernels) and compute (everything else: kernels, memcpy, memset), each
// as the union of its intervals per device. A collective kernel that waits
// for a slower rank keeps the GPU "busy" without computing anything, so
// the two are reported apart.
type commBusy struct {
	comm, compute *BusyFacts
}

// splitBusy builds the two unions, or nil when the trace has no
// communication kernels (then compute is all of busy).
func splitBusy(t *trace.Trace, cat []string) *commBusy {
	hasComm := false
	for g := range t.GPU {
		if cat[g] == CategoryCommunication {
			hasComm = true
			break
		}
	}
	if !hasComm {
		return nil
	}
	part := func(comm bool) *BusyFacts {
		sub := &BusyFacts{busy: map[int32][]trace.Span{}}
		for g := range t.GPU {
			if (cat[g] == CategoryCommunication) == comm {
				a := &t.GPU[g]
				sub.busy[a.Device] = append(sub.busy[a.Device], a.Span)
			}
		}
		for dev, spans := range sub.busy {
			sub.busy[dev] = mergedSpans(spans)
			sub.devices = append(sub.devices, dev)
		}
		return sub
	}
	return &commBusy{comm: part(true), compute: part(false)}
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
	total := func(sub *BusyFacts) float64 {
		var d trace.Duration
		for _, spans := range sub.busy {
			for _, sp := range spans {
				d += sp.Dur()
			}
		}
		return us(d)
	}
	// Per step, steps() splits the work each step launched (stepWorks).
	s.ComputeBusyUs, s.CommunicationUs = total(cb.compute), total(cb.comm)
}

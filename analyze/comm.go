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
	comm, compute *index
}

// splitBusy builds the two unions, or nil when the trace has no
// communication kernels (then compute is all of busy).
func (ix *index) splitBusy() *commBusy {
	t := ix.t
	hasComm := false
	for g := range t.GPU {
		if ix.cat[g] == CategoryCommunication {
			hasComm = true
			break
		}
	}
	if !hasComm {
		return nil
	}
	part := func(comm bool) *index {
		sub := &index{t: t, busy: map[int32][]trace.Span{}}
		for g := range t.GPU {
			if (ix.cat[g] == CategoryCommunication) == comm {
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
	cb := ix.splitBusy()
	ix.comm = cb
	s := &r.Summary
	if cb == nil {
		s.ComputeBusyUs = s.GPUBusyUs
		for i := range r.Steps {
			r.Steps[i].ComputeBusyUs = r.Steps[i].GPUBusyUs
		}
		return
	}
	total := func(sub *index) float64 {
		var d trace.Duration
		for _, spans := range sub.busy {
			for _, sp := range spans {
				d += sp.Dur()
			}
		}
		return us(d)
	}
	s.ComputeBusyUs, s.CommunicationUs = total(cb.compute), total(cb.comm)
	for i, st := range ix.t.Steps {
		r.Steps[i].ComputeBusyUs = us(cb.compute.busyIn(st.Start, st.End))
		r.Steps[i].CommunicationUs = us(cb.comm.busyIn(st.Start, st.End))
	}
}

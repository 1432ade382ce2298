package analyze

// A rank of a multi-rank run (Config.PeerWait) runs communication kernels
// that spin while they wait for a later peer: the GPU is occupied but does
// no work, and the time is the peer_wait line of the step's ledger. Every
// per-step figure counts it as waiting, not as GPU busy or communication,
// so the report's and export's step tables, the headline and the diff
// read a waiting rank's GPU as idle for that time, as distributed's
// per-rank figures do.

// spinAsWaiting moves each step's peer wait (its ledger's peer_wait line:
// time only communication kernels ran, waiting for a peer) from GPU busy
// and communication to GPU idle, and reports whether any step had some.
func spinAsWaiting(r *Result) bool {
	moved := false
	for i := range r.Steps {
		s := &r.Steps[i]
		// The ledger's peer_wait line is the step window's, which can
		// hold the previous step's collectives spinning into it, while
		// GPU busy is the step's own work: the spin moved is at most the
		// step's busy time beyond its compute (its own kernels' share).
		spin := min(LedgerUs(s.Ledger, LinePeerWait), s.GPUBusyUs-s.ComputeBusyUs, s.CommunicationUs)
		if spin <= 0 {
			continue
		}
		moved = true
		s.GPUBusyUs -= spin
		s.CommunicationUs -= spin
		s.GPUIdleUs += spin
		s.GPUBusyShare = 0
		if s.WallUs > 0 && s.GPUIdleUs+s.GPUBusyUs > 0 {
			// busy over wall × devices, as stepTimes has it
			s.GPUBusyShare = min(s.GPUBusyUs/(s.GPUBusyUs+s.GPUIdleUs), 1)
		}
		s.GPUBoundUs = min(s.GPUBoundUs, s.GPUBusyUs)
		s.IrreducibleGPUUs = min(s.IrreducibleGPUUs, s.GPUBusyUs)
	}
	return moved
}

// Package distributed analyzes a multi-rank training run — one trace per
// rank, as torch.profiler's tensorboard_trace_handler writes them — as a
// whole: it matches each collective across the ranks of its process
// group, and each send and recv with its peer's (p2pops.go, p2pmatch.go:
// a pipeline's middle stages talk to two neighbours, and a batched
// kernel carries several), splits communication time into waiting for late ranks and moving
// data, estimates the ranks' clock offsets from collective end times, and
// finds the rank that makes the others wait, and why.
//
// Load reads the ranks in parallel and keeps of each only what
// cross-rank analysis needs (its communication kernels with their
// arguments and overlap, its steps and totals), so memory grows with the
// number of collectives, not with the number of ranks × their traces.
// The findings (Analyze) re-read the two ranks a straggler explanation
// compares. They come from the cross-rank checks (Checks: straggler,
// exposed-comm, pipeline-bubble, alltoall-imbalance, comm-bandwidth),
// selected by Options.Enable/Disable as analyzers are. A straggler's
// lateness is at most the union of the others' waits; its saving is
// bounded by what the waiting ranks can gain (their wait less their own
// compute meanwhile, and no more than any rank's host slack, as the
// ranks move in lockstep), and it is judged step by step (steady,
// transient, shifting).
//
// A run is one analysis: Run.PeerWaits gives a rank's waiting intervals
// for analyze.Config.PeerWait (its ledger's peer_wait line), and Combine
// ranks the run's findings with that rank's own, the one list every face
// of a run directory shows.
package distributed

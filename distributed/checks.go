package distributed

import "slices"

// Check is one cross-rank check: the run-level counterpart of an
// analyze.Analyzer, named like one (its Name is the id of its findings),
// listed with them by `tracelens analyzers` and selected with the same
// --enable/--disable flags.
type Check struct {
	Name string
	Doc  string
}

// Checks returns the cross-rank checks in the order Analyze runs them.
func Checks() []Check {
	return []Check{
		{IDStraggler, "Finds the rank the others wait for in collectives: per matched collective, the last rank's arrival minus the median of the others' (over collectives it reaches more than 50 µs after the first), per step. " +
			"Lateness is at most the union of the others' waits for it. It is a straggler when that is ≥ 10% of the median step and ≥ 500 µs per step, and ≥ 50% of all ranks' lateness or it waits itself at most a tenth of its lateness (in a 2-D mesh the others' lateness cascades from it). The saving is that lateness bounded by what the waiting ranks can gain: " +
			"their wait for it less their own compute meanwhile, per step (the median over them), and at most every other rank's host slack (the ranks move in lockstep: no step shrinks below a rank's own host work). Judged step by step as steady, transient or shifting; explained by comparing the straggler's windows before the collectives with a reference rank's (host ranges, syncs, ops, kernels)."},
		{IDExposedComm, "Per parallelism dimension (process group description), communication no compute kernel hides and that is not waiting for a late rank: reported when ≥ 5% of the step and ≥ 100 µs per rank per step; the saving is that time (better overlap: bucket sizes, prefetch)."},
		{IDPipelineBubble, "Pipeline parallelism: sends and recvs matched by peer (the n-th send from a to b with the n-th recv on b from a; a batched kernel carries several); per stage, its compute per step and its bubble: the wait of its send/recv kernels for the kernels they exchange with that no compute of its own hid. Reported when the stages' mean bubble is ≥ 10% of the median step and ≥ 500 µs; the saving is half that mean bubble, what doubling the micro-batches gives back (an interleaved schedule, balanced stages)."},
		{IDAllToAllImbalance, "Mixture-of-experts all-to-all: per rank, the matched all-to-alls' bytes and kernel time per step. Reported when the busiest rank's time is ≥ 5% of the step and ≥ 200 µs above the median rank's and its bytes ≥ 1.2× the mean (uneven routing); the saving is that excess time."},
		{IDCommBandwidth, "Per dimension and collective kind, transfers slower than 2× the time the message (× NCCL's bus factor) takes at 80% of the device's link plus 20 µs, losing ≥ 5% of the step; the saving is the time over that."},
	}
}

// IsCheck reports whether name is a cross-rank check.
func IsCheck(name string) bool {
	return slices.ContainsFunc(Checks(), func(c Check) bool { return c.Name == name })
}

// Selected reports whether check name runs under opt's selection.
func (opt *Options) Selected(name string) bool {
	if len(opt.Enable) > 0 && !slices.Contains(opt.Enable, name) {
		return false
	}
	return !slices.Contains(opt.Disable, name)
}

package analyze

import (
	"fmt"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// Why host-sync leaves a blocking call out of its saving.
const (
	syncInternal   = "framework-internal (no user op or Python line)"
	syncCollective = "waiting on a collective (NCCL) kernel"
)

// syncExcluded says why a blocking call without a user-visible cause is
// not the user's sync to remove, and where it happened; "" when it is
// the user's. A call outside any framework op made from inside a
// library's Python (DistributedDataParallel.forward's
// cudaEventSynchronize) is the framework's own, unless that library
// frame is torch.cuda's synchronize itself (the user called it). A sync
// during which a communication kernel runs is a wait on another rank,
// whose cause is the collective, not this host.
func (ix *index) syncExcluded(c *trace.APICall) (why, where string) {
	t := ix.t
	if ix.comm != nil {
		if d := ix.comm.comm.busyIn(c.Start, c.End); 2*d >= c.Dur() && d > 0 {
			return syncCollective, c.Name
		}
	}
	if c.Op != trace.None || c.Frame == trace.None {
		return "", ""
	}
	// The innermost frame with a source location (built-ins have none:
	// DDP's reducer is a pybind11 method called from distributed.py).
	var file, fn string
	ok := false
	for f := c.Frame; f != trace.None && !ok; f = t.Frames[f].Parent {
		file, _, fn, ok = t.Frames[f].Source()
	}
	if !ok || !libraryFile(file) || strings.Contains(file, "torch/cuda/") {
		return "", ""
	}
	// Name the framework code by its nn.Module or function.
	for f := c.Frame; f != trace.None; f = t.Frames[f].Parent {
		if m, ok := moduleFrame(t.Frames[f].Name); ok {
			return syncInternal, "nn.Module " + m
		}
	}
	short := file
	if i := strings.LastIndex(file, "torch/"); i >= 0 {
		short = file[i:]
	}
	return syncInternal, fmt.Sprintf("%s() in %s", fn, short)
}

// idleDuring returns the part of span during which no GPU ran anything:
// host time blocked in a sync costs the step only while the GPU is idle
// too (a host waiting on a busy GPU is the GPU's pace, not a stall).
func (ix *index) idleDuring(s trace.Span) trace.Duration {
	busy := ix.busyIn(s.Start, s.End)
	n := trace.Duration(max(len(ix.devices), 1))
	return max(s.Dur()-busy/n, 0)
}

package distributed

import "github.com/tracelens/tracelens/trace"

// StepComm is one rank's communication in one step (ProfilerStep), the
// samples `diff` compares between runs.
type StepComm struct {
	Wall       trace.Duration
	CommKernel trace.Duration
	Exposed    trace.Duration
	// Wait is time in matched collectives waiting for later ranks.
	Wait trace.Duration
}

// PerStep returns rank index ri's figures per step, in step order; a
// collective counts in the step its kernel started in.
func (run *Run) PerStep(ri int) []StepComm {
	r := run.Ranks[ri]
	out := make([]StepComm, len(r.Steps))
	for i, s := range r.Steps {
		out[i].Wall = s.Dur()
	}
	for _, c := range r.Collectives {
		if st := stepOf(r.Steps, c.Start); st >= 0 {
			out[st].CommKernel += c.Dur()
			out[st].Exposed += c.Exposed
		}
	}
	for ci := range run.Collectives {
		c := &run.Collectives[ci]
		for i, p := range c.Participants {
			if p != ri {
				continue
			}
			if st := stepOf(r.Steps, r.Collectives[c.Calls[i]].Start); st >= 0 {
				out[st].Wait += c.Wait(i)
			}
		}
	}
	return out
}

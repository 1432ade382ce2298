package report

import (
	"fmt"

	"github.com/tracelens/tracelens/analyze"
)

// phases renders the forward / backward / optimizer split of kernel time
// per step and its steady medians, as analyze computed them.
func (d *doc) phases(r *analyze.Result) {
	if !r.HasPhaseSplit() {
		return
	}
	st := r.StepStats
	d.para("%s", phaseLine(st, steadyLabel(st)))
	tb := newTable(left("Step"), right("Forward"), right("Backward"), right("Optimizer"), right("Kernel time"))
	steps := r.Steps
	const maxRows = 12
	for i, s := range steps {
		if len(steps) > maxRows && i == 8 {
			tb.add(fmt.Sprintf("… %d more", len(steps)-11), "", "", "", "")
		}
		if len(steps) > maxRows && i >= 8 && i < len(steps)-3 {
			continue
		}
		tb.add(fmt.Sprintf("#%d", s.Number), us(s.ForwardUs), us(s.BackwardUs), us(s.OptimizerUs), us(s.KernelUs))
	}
	if len(steps) < 2 {
		// The one step's row already is the figure the line quotes.
		d.table(tb)
		return
	}
	tb.add("**"+steadyLabel(st)+"**", us(st.MedianForwardUs), us(st.MedianBackwardUs), us(st.MedianOptimizerUs), "")
	d.table(tb)
}

// phaseLine is the one-sentence phase split of a step's kernel time, with
// analyze's shares of the three.
func phaseLine(st analyze.StepStats, label string) string {
	line := fmt.Sprintf("Kernel time per step by phase (%s): forward %s, backward %s, optimizer %s", label, us(st.MedianForwardUs), us(st.MedianBackwardUs), us(st.MedianOptimizerUs))
	if st.MedianForwardUs+st.MedianBackwardUs+st.MedianOptimizerUs > 0 {
		line += fmt.Sprintf(" (%s / %s / %s)", pct(st.ForwardShare), pct(st.BackwardShare), pct(st.OptimizerShare))
	}
	return line + "."
}

// busySplit quotes compute and communication busy time, when the trace
// has any collective kernels.
func (d *doc) busySplit(r *analyze.Result) {
	s := r.Summary
	if s.CommunicationUs <= 0 {
		return
	}
	// Compute and communication are each a union of intervals: they
	// overlap where a collective runs beside compute, so they are quoted
	// side by side, never as parts of GPU busy.
	d.para("Over the trace, compute kernels keep the GPU busy %s and communication (NCCL/RCCL) kernels %s, including time waiting for other ranks; where the two overlap they need not add up to GPU busy %s.",
		us(s.ComputeBusyUs), us(s.CommunicationUs), us(s.GPUBusyUs))
}

// steadyLabel names the steps analyze's steady medians are over: the
// steps after the first, or the only step.
func steadyLabel(st analyze.StepStats) string {
	if st.Count < 2 {
		return "the only step"
	}
	return "median excl. first"
}

package distributed

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/trace"
)

// Pipeline parallelism moves activations between stages with
// point-to-point send/recv: a stage's GPU idles in its recv until the
// previous stage has sent (and in its send until the next one receives).
// Matched send/recv pairs say how long each stage waited for its
// neighbour: the pipeline bubble.

// IDPipelineBubble is the id of the pipeline-bubble finding.
const IDPipelineBubble = "pipeline-bubble"

// Thresholds of the pipeline-bubble finding: the stages' mean bubble per
// step over the median step, and at least this much per step.
const (
	bubbleShare = 0.10
	bubbleMin   = 500_000 // ns
)

// StageRow is one pipeline stage's (rank's) figures per step, in
// microseconds: its compute (the union of its compute kernels), its
// send/recv kernel time and bytes, and its bubble (the wait in matched
// send/recv no compute of its own hid) with its share of the rank's
// median step.
type StageRow struct {
	Rank         int     `json:"rank"`
	Calls        int     `json:"p2p_calls"`
	BusyUs       float64 `json:"compute_per_step_us"`
	P2PUs        float64 `json:"p2p_kernel_per_step_us"`
	BytesPerStep int64   `json:"p2p_bytes_per_step"`
	BubbleUs     float64 `json:"bubble_per_step_us"`
	BubbleShare  float64 `json:"bubble_share"`
	// Sends is the number of sends the stage issued over the trace, when
	// the trace names them (0 otherwise): the first stage sends one
	// activation per micro-batch.
	Sends int `json:"sends"`
}

// p2pBytes is what a send/recv kernel moves: its sends' and recvs' sizes
// when the trace names them (a batched kernel carries several), else its
// own arguments'.
func p2pBytes(rc *RankCollective) int64 {
	if len(rc.P2P) > 0 {
		sent, received := rc.P2PBytes()
		return sent + received
	}
	if eb := DTypeBytes(rc.Args.DType); eb > 0 {
		return max(rc.Args.InNelems, rc.Args.OutNelems) * eb
	}
	return 0
}

// Pipeline returns a row per rank that takes part in matched send/recv,
// in rank order; nil when the run has none.
func (run *Run) Pipeline() []StageRow {
	steps := trace.Duration(run.stepCount())
	rows := make([]StageRow, len(run.Ranks))
	var bubble, kernel []trace.Duration
	bubble, kernel = make([]trace.Duration, len(run.Ranks)), make([]trace.Duration, len(run.Ranks))
	found := false
	for ci := range run.Collectives {
		c := &run.Collectives[ci]
		if c.Kind != SendRecv {
			continue
		}
		found = true
		for i, p := range c.Participants {
			rc := &run.Ranks[p].Collectives[c.Calls[i]]
			rows[p].Calls++
			kernel[p] += rc.Dur()
			bubble[p] += run.exposedWait(c, i)
			rows[p].BytesPerStep += p2pBytes(rc)
			for _, o := range rc.P2P {
				if o.Send {
					rows[p].Sends++
				}
			}
		}
	}
	if !found {
		return nil
	}
	var out []StageRow
	for i, r := range run.Ranks {
		if rows[i].Calls == 0 {
			continue
		}
		row := rows[i]
		row.Rank = r.Rank
		row.BusyUs = (r.Compute / steps).Micros()
		row.P2PUs = (kernel[i] / steps).Micros()
		row.BytesPerStep /= int64(steps)
		row.BubbleUs = (bubble[i] / steps).Micros()
		if m := run.Stats[i].StepMedian; m > 0 {
			row.BubbleShare = min(float64(bubble[i]/steps)/float64(m), 1)
		}
		out = append(out, row)
	}
	return out
}

// findBubble reports a pipeline whose stages idle, on average, a material
// share of the step waiting for their neighbours in send/recv. The saving
// is what doubling the micro-batches gives back: half the mean bubble (a
// fill-drain or 1F1B schedule idles (stages−1) micro-batch times, and a
// micro-batch of half the size takes about half the time). The whole
// bubble is the most any schedule gives back. On the recorded 4-stage
// pairs (16 micro-batches for 8, TestRunFixPairs) the bubble fell by
// 87 % of the prediction, but half-size micro-batches added 4.5 % of
// compute per stage, so the step fell by 0.63× of it.
func (run *Run) findBubble(stages []StageRow, step trace.Duration) []Finding {
	if len(stages) < 2 {
		return nil
	}
	var sum float64
	worst := stages[0]
	f := Finding{}
	for _, s := range stages {
		sum += s.BubbleUs
		if s.BubbleUs > worst.BubbleUs {
			worst = s
		}
		f.Ranks = append(f.Ranks, s.Rank)
	}
	mean := trace.Duration(sum / float64(len(stages)) * 1000)
	if mean < bubbleMin || step > 0 && float64(mean) < bubbleShare*float64(step) {
		return nil
	}
	// The bubble is the stages' waiting in collectives: the same part
	// a straggler's saving comes out of (a late stage is both), so the
	// two overlap in the combined saving instead of adding up.
	f.ID, f.Subject, f.SavingFrom = IDPipelineBubble, fmt.Sprintf("%d stages", len(stages)), FromCollectiveWait
	saving := capAt(mean/2, step)
	f.SavingUs, f.SavingNs = saving.Micros(), int64(saving)
	if step > 0 {
		f.Share = min(float64(saving)/float64(step), 1)
	}
	f.Severity, f.Confidence = analyze.Medium, analyze.High
	if f.Share >= 0.25 {
		f.Severity = analyze.High
	}
	f.Title = truncate(fmt.Sprintf("Pipeline stages idle %s per step (%.0f%% of the step) waiting for each other in send/recv", mean, 100*shareOf(mean, step)), 100)
	f.Measures = []analyze.Measure{{Name: "mean bubble per step", Value: analyze.Dur(mean)},
		{Name: "worst stage bubble per step", Value: analyze.Dur(trace.Duration(worst.BubbleUs * 1000))}, {Name: "median step", Value: analyze.Dur(step)}}
	t := analyze.NewTable(analyze.Col("rank", analyze.KindName), analyze.Col("compute per step", analyze.KindDuration),
		analyze.Col("send/recv per step", analyze.KindDuration), analyze.Col("bubble per step", analyze.KindDuration))
	for _, s := range stages {
		t.Add(analyze.NameCell(fmt.Sprint(s.Rank)), analyze.Dur(trace.Duration(s.BusyUs*1000)), analyze.Dur(trace.Duration(s.P2PUs*1000)), analyze.Dur(trace.Duration(s.BubbleUs*1000)))
	}
	f.Evidence = []analyze.Evidence{{Text: fmt.Sprintf(
		"per stage, the wait in matched send/recv (from its kernel's start until the peer's arrival) that no compute of its own hid: rank %d waits most, %s per step", worst.Rank, trace.Duration(worst.BubbleUs*1000)), Table: t},
		{Text: run.bubbleModel(stages, mean, step)}}
	f.Fix = "Shrink the pipeline bubble: more micro-batches per step (the bubble is about (stages−1)/(micro-batches+stages−1) of a 1F1B schedule), an interleaved/virtual-stage schedule (torch.distributed.pipelining ScheduleInterleaved1F1B), or move layers from the slowest stage so the stages' compute per step is even."
	heaviest := slices.MaxFunc(stages, func(a, b StageRow) int { return cmp.Compare(a.BusyUs, b.BusyUs) })
	if worst.BusyUs < 0.8*heaviest.BusyUs {
		f.Fix += fmt.Sprintf(" Rank %d computes least (%s per step against rank %d's %s) and waits most: balance the stages.",
			worst.Rank, trace.Duration(worst.BusyUs*1000), heaviest.Rank, trace.Duration(heaviest.BusyUs*1000))
	}
	return []Finding{f}
}

// bubbleModel states the saving model: the schedule's ideal bubble for
// the stages and micro-batches the trace shows, against the measured one.
func (run *Run) bubbleModel(stages []StageRow, mean, step trace.Duration) string {
	n := len(stages)
	text := fmt.Sprintf("saving model: doubling the micro-batches (each half the size) halves the bubble: %s per step, if a micro-batch's compute halves with its size (smaller GEMMs run less efficiently: expect somewhat less); an interleaved schedule with v virtual stages per rank divides it by v; the whole bubble, %s, is the most any schedule gives back", mean/2, mean)
	// The first stage sends one activation per micro-batch.
	m := int(math.Round(float64(stages[0].Sends) / float64(run.stepCount())))
	if m <= 0 || step <= 0 {
		return text
	}
	ideal := float64(n-1) / float64(m+n-1)
	return fmt.Sprintf("%d stages and %d micro-batches a step: a fill-drain or 1F1B schedule idles (stages−1)/(micro-batches+stages−1) = %.0f%% of the step, against %.0f%% measured; ",
		n, m, 100*ideal, 100*shareOf(mean, step)) + text
}

// shareOf is part over whole, 0 when whole is not positive.
func shareOf(part, whole trace.Duration) float64 {
	if whole <= 0 {
		return 0
	}
	return float64(part) / float64(whole)
}

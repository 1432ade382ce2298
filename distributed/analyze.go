package distributed

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
)

// Result is a run's analysis in the form faces read: per-rank and
// per-dimension rows in microseconds, clocks, and the findings. It is the
// "ranks" part of `tracelens report --format json DIR` (see
// docs/distributed-json.md).
type Result struct {
	WorldSize int   `json:"world_size"`
	Missing   []int `json:"missing_ranks"`
	// ClockCorrected is true when the ranks' clock offsets were large
	// enough to be subtracted before computing skew and wait.
	ClockCorrected bool        `json:"clock_corrected"`
	Collectives    int         `json:"collectives"`
	Unmatched      []Unmatched `json:"unmatched"`
	Ranks          []RankRow   `json:"ranks,omitempty"`
	Dimensions     []DimRow    `json:"dimensions"`
	// Straggler explains the straggler finding; nil without one (or when
	// the two ranks' traces could not be read again).
	Straggler *StragglerRow `json:"straggler,omitempty"`
	// Pipeline has a row per pipeline stage (ranks in matched send/recv)
	// and AllToAll one per rank in matched all-to-alls; empty without.
	Pipeline []StageRow    `json:"pipeline,omitempty"`
	AllToAll []AllToAllRow `json:"all_to_all,omitempty"`
	// Findings are the run's cross-rank findings; once Combine made the
	// run one analysis, ranked together with the described rank's own
	// (Rank), each with the ranks it concerns.
	Findings []Finding `json:"findings"`
	Warnings []string  `json:"warnings"`
	// Rank is the global rank whose findings Combine merged in, and
	// CombinedSavingUs (CombinedSavingShare of the step) what fixing every
	// finding saves per step; 0 before Combine.
	Rank                int     `json:"described_rank"`
	CombinedSavingUs    float64 `json:"combined_saving_us"`
	CombinedSavingShare float64 `json:"combined_saving_share"`
}

// RankRow is one rank's figures. Shares are 0–1.
type RankRow struct {
	Rank              int     `json:"rank"`
	Source            string  `json:"source"`
	RankFrom          string  `json:"rank_from"`
	Steps             int     `json:"steps"`
	StepMedianUs      float64 `json:"step_median_us"`
	CommKernels       int     `json:"comm_kernels"`
	CommKernelUs      float64 `json:"comm_kernel_us"`
	ExposedCommUs     float64 `json:"exposed_comm_us"`
	OverlapShare      float64 `json:"overlap_share"`
	ComputeUs         float64 `json:"compute_us"`
	WaitUs            float64 `json:"wait_us"`
	TransferUs        float64 `json:"transfer_us"`
	ExposedTransferUs float64 `json:"exposed_transfer_us"`
	// PeerWaitUs is the part of WaitUs no compute kernel of the rank hid
	// (the GPU only spinning for a later rank); the step ledger's
	// peer_wait line of each of the rank's steps is made of it.
	PeerWaitUs float64 `json:"peer_wait_us"`
	// GPUBusyUs is the rank's GPU busy time over the trace (the union of
	// its kernels, copies and sets) with its spinning left out:
	// GPUSpinUs, the union of its peer waits that no other GPU activity
	// of the rank hid, counts as waiting, not as work. Their shares are
	// of the rank's GPU window (its first GPU activity's start to its
	// last one's end). Every face's per-rank GPU busy is this figure.
	GPUBusyUs       float64 `json:"gpu_busy_us"`
	GPUSpinUs       float64 `json:"gpu_spin_us"`
	GPUBusyShare    float64 `json:"gpu_busy_share"`
	GPUSpinShare    float64 `json:"gpu_spin_share"`
	StartSkewUs     float64 `json:"start_skew_us"`
	EndSkewUs       float64 `json:"end_skew_us"`
	LastArrivals    int     `json:"last_arrivals"`
	CausedWaitUs    float64 `json:"caused_wait_us"`
	ClockOffsetUs   float64 `json:"clock_offset_us"`
	ClockResidualUs float64 `json:"clock_residual_us"`
}

// DimRow is one parallelism dimension's figures, summed over ranks.
type DimRow struct {
	Dimension         string   `json:"dimension"`
	Groups            []string `json:"groups"`
	Kinds             []string `json:"kinds"`
	Collectives       int      `json:"collectives"`
	Ranks             int      `json:"ranks"`
	CommKernelUs      float64  `json:"comm_kernel_us"`
	ExposedCommUs     float64  `json:"exposed_comm_us"`
	ExposedTransferUs float64  `json:"exposed_transfer_us"`
	// ExposedWaitUs is the exposed communication spent waiting for later
	// ranks: ExposedCommUs less ExposedTransferUs.
	ExposedWaitUs float64 `json:"exposed_wait_us"`
	WaitUs        float64 `json:"wait_us"`
	Bytes         int64   `json:"bytes"`
}

// Reader reads a rank's full trace again (Analyze needs two ranks in
// detail to explain a straggler). ReadRankTrace is the usual one.
type Reader func(path string) (*trace.Trace, error)

// Analyze computes the run's findings. read may be nil: the straggler
// finding is then made without its explanation.
func Analyze(run *Run, read Reader, opt Options) *Result {
	res := &Result{WorldSize: run.WorldSize, Missing: run.Missing, ClockCorrected: run.ClockCorrected,
		Collectives: len(run.Collectives), Unmatched: run.Unmatched, Warnings: run.Warnings}
	for i, r := range run.Ranks {
		s := run.Stats[i]
		res.Ranks = append(res.Ranks, RankRow{
			Rank: r.Rank, Source: r.Source, RankFrom: r.RankFrom, Steps: s.Steps, StepMedianUs: s.StepMedian.Micros(),
			CommKernels: len(r.Collectives), CommKernelUs: s.CommKernel.Micros(), ExposedCommUs: s.Exposed.Micros(),
			OverlapShare: s.OverlapShare, ComputeUs: s.Compute.Micros(), WaitUs: s.Wait.Micros(), TransferUs: s.Transfer.Micros(),
			ExposedTransferUs: s.ExposedTransfer.Micros(), PeerWaitUs: s.PeerWait.Micros(), StartSkewUs: s.StartSkew.Micros(), EndSkewUs: s.EndSkew.Micros(),
			LastArrivals: s.Last, CausedWaitUs: s.CausedWait.Micros(),
			GPUBusyUs: s.GPUBusy.Micros(), GPUSpinUs: s.GPUSpin.Micros(), GPUBusyShare: share(s.GPUBusy, s.GPUWindow), GPUSpinShare: share(s.GPUSpin, s.GPUWindow),
			ClockOffsetUs: run.Clocks[i].Offset.Micros(), ClockResidualUs: run.Clocks[i].Residual.Micros(),
		})
	}
	for _, d := range run.Dimensions {
		res.Dimensions = append(res.Dimensions, DimRow{Dimension: d.Dimension, Groups: d.Groups, Kinds: d.Kinds,
			Collectives: d.Collectives, Ranks: d.Ranks, CommKernelUs: d.CommKernel.Micros(), ExposedCommUs: d.Exposed.Micros(),
			ExposedTransferUs: d.ExposedTransfer.Micros(), ExposedWaitUs: max(d.Exposed-d.ExposedTransfer, 0).Micros(),
			WaitUs: d.Wait.Micros(), Bytes: d.Bytes})
	}
	sc, ok := run.Straggler()
	step, steps := sc.Step, sc.Steps
	if ok && sc.Is && opt.Selected(IDStraggler) {
		var ex *Explanation
		if read != nil {
			defer ingest.CollectorLimit(opt.MemoryBudget)()
			var err error
			if ex, err = run.Explain(sc.Index, sc.Reference, read, opt.CommKernel); err != nil {
				res.Warnings = append(res.Warnings, fmt.Sprintf("straggler explanation skipped: %v", err))
			}
		}
		if ex != nil {
			res.Straggler = ex.row(run.lateKind(sc.Index))
		}
		f := run.findStraggler(sc, ex)
		run.patternEvidence(&f, run.stepPattern(sc.Index, sc.Step), run.lateKind(sc.Index))
		res.Findings = append(res.Findings, f)
	}
	if opt.Selected(IDExposedComm) {
		res.Findings = append(res.Findings, run.findExposed(step, steps)...)
	}
	res.Pipeline, res.AllToAll = run.Pipeline(), run.AllToAll()
	if opt.Selected(IDPipelineBubble) {
		res.Findings = append(res.Findings, run.findBubble(res.Pipeline, step)...)
	}
	if opt.Selected(IDAllToAllImbalance) {
		res.Findings = append(res.Findings, run.findAllToAll(res.AllToAll, step)...)
	}
	if opt.Selected(IDCommBandwidth) {
		res.Findings = append(res.Findings, run.findBandwidth(step, steps)...)
	}
	slices.SortStableFunc(res.Findings, func(a, b Finding) int { return cmp.Compare(b.SavingUs, a.SavingUs) })
	return res
}

// StragglerRow is the straggler explanation in microseconds; the [2]
// arrays are [straggler, reference].
type StragglerRow struct {
	Rank        int             `json:"rank"`
	Reference   int             `json:"reference_rank"`
	Kind        string          `json:"kind"`
	Sentence    string          `json:"sentence"`
	LateUs      float64         `json:"late_per_step_us"`
	Windows     int             `json:"windows"`
	Steps       int             `json:"steps"`
	WindowUs    [2]float64      `json:"window_us"`
	GPUBusyUs   [2]float64      `json:"gpu_busy_us"`
	GPUIdleUs   [2]float64      `json:"gpu_idle_us"`
	ComputeUs   [2]float64      `json:"compute_per_step_us"`
	Differences []DifferenceRow `json:"differences"`
}

// DifferenceRow is one Difference in microseconds per step.
type DifferenceRow struct {
	What           string  `json:"what"`
	Name           string  `json:"name"`
	StragglerUs    float64 `json:"straggler_us"`
	ReferenceUs    float64 `json:"reference_us"`
	StragglerCount float64 `json:"straggler_count"`
	ReferenceCount float64 `json:"reference_count"`
	P              float64 `json:"p"`
}

func (ex *Explanation) row(kind string) *StragglerRow {
	r := &StragglerRow{Rank: ex.Straggler, Reference: ex.Reference, Kind: ex.Kind, Sentence: ex.Sentence(kind),
		LateUs: ex.Late.Micros(), Windows: ex.Windows, Steps: ex.Steps}
	for i := 0; i < 2; i++ {
		r.WindowUs[i], r.GPUBusyUs[i], r.GPUIdleUs[i] = ex.Window[i].Micros(), ex.GPUBusy[i].Micros(), ex.GPUIdle[i].Micros()
		r.ComputeUs[i] = ex.Compute[i].Micros()
	}
	for _, d := range ex.Differences[:min(len(ex.Differences), 20)] {
		r.Differences = append(r.Differences, DifferenceRow{What: d.What, Name: d.Name, StragglerUs: d.Straggler.Micros(),
			ReferenceUs: d.Reference.Micros(), StragglerCount: d.StragglerCount, ReferenceCount: d.ReferenceCount, P: d.P})
	}
	return r
}

// share is part over whole (0–1), 0 when whole is 0.
func share(part, whole trace.Duration) float64 {
	if whole <= 0 {
		return 0
	}
	return min(float64(part)/float64(whole), 1)
}

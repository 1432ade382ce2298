package export

import (
	"slices"

	"github.com/tracelens/tracelens/distributed"
)

// CollectiveRow is one communication kernel (NCCL/RCCL) on one rank of a
// multi-rank run, with what package distributed learned by matching it
// with the other ranks' kernels of the same collective call. Only the
// ranks of a job have rows: a trace exported on its own has no other
// ranks to match with. The cross-rank columns (matched through
// busbw_gbps) are NULL or false for a kernel that was not matched (its
// group has no other rank's trace, or it was launched before the profiler
// started and carries no arguments).
type CollectiveRow struct {
	Run       string `parquet:"run,dict"`
	Job       string `parquet:"job,dict"`
	Rank      int32  `parquet:"rank"`
	WorldSize int32  `parquet:"world_size"`
	// PGName and PGDesc are the process group's name and description
	// (distributedInfo.pg_config's pg_name, pg_desc); Dimension the
	// parallelism dimension the description names (dp, tp, fsdp, ...,
	// "default"). NULL when the kernel carries no arguments.
	PGName    *string `parquet:"pg_name,optional,dict"`
	PGDesc    *string `parquet:"pg_desc,optional,dict"`
	Dimension *string `parquet:"dimension,optional,dict"`
	// Seq is the call's sequence number in its group: the profiler's Seq,
	// else (SeqFromOrder) its position in the group's order on the first
	// rank, as distributed matched it. NULL when unmatched and the trace
	// has no Seq. (job, pg_name, seq) identifies one collective call
	// across ranks.
	Seq          *int64 `parquet:"seq,optional"`
	SeqFromOrder bool   `parquet:"seq_from_order"`
	// Kind is the collective (all_reduce, all_gather, reduce_scatter,
	// all_to_all, broadcast, reduce, send_recv, barrier, unknown);
	// Collective the profiler's "Collective name"; Kernel the kernel.
	Kind       string  `parquet:"kind,dict"`
	Collective *string `parquet:"collective,optional,dict"`
	Kernel     string  `parquet:"kernel,dict"`
	Stream     int32   `parquet:"stream"`
	// Step is the number of the rank's step the kernel was launched in
	// (by the launch call, else the kernel's start), NULL outside steps.
	Step *int32 `parquet:"step,optional"`
	// DType is the element type as the profiler names it (Float,
	// BFloat16, ...; from the kernel's name when it has no arguments).
	DType *string `parquet:"dtype,optional,dict"`
	// InNelems and OutNelems are the message sizes in elements; InBytes
	// and OutBytes in bytes; Bytes is NCCL's message size, the larger of
	// the two. A send/recv kernel's in is what it sends and its out what
	// it receives (over the sends and recvs it carries). NULL when the
	// trace does not say (or the dtype's size is unknown).
	InNelems  *int64 `parquet:"in_nelems,optional"`
	OutNelems *int64 `parquet:"out_nelems,optional"`
	InBytes   *int64 `parquet:"in_bytes,optional"`
	OutBytes  *int64 `parquet:"out_bytes,optional"`
	Bytes     *int64 `parquet:"bytes,optional"`
	// Start is the kernel's start on the rank's own clock, Launch the
	// launch call's (NULL when the launch is not in the trace).
	Start      int64  `parquet:"start,timestamp(nanosecond:local)"`
	DurationNs int64  `parquet:"duration_ns"`
	Launch     *int64 `parquet:"launch,optional,timestamp(nanosecond:local)"`
	// ExposedNs is the part of the kernel when no compute kernel ran on
	// any stream of the rank.
	ExposedNs int64 `parquet:"exposed_ns"`
	// Matched is true when the kernel was matched with the other ranks'
	// kernels of the same call; Participants counts those ranks.
	Matched      bool   `parquet:"matched"`
	Participants *int32 `parquet:"participants,optional"`
	// ArriveSkewNs is this rank's arrival (kernel start) minus the
	// earliest participant's (LeaveSkewNs below, the same for kernel
	// ends); WaitNs the latest participant's arrival
	// minus this rank's: the time this rank's kernel spent waiting for
	// the others. Both on the reference rank's clock when distributed
	// corrected the ranks' clocks (runs.clock_corrected is not stored:
	// `tracelens report DIR` says it). TransferNs is the shortest kernel
	// duration across the participants, the time the data moved.
	ArriveSkewNs *int64 `parquet:"arrive_skew_ns,optional"`
	// LeaveSkewNs is this rank's kernel end minus the earliest
	// participant's.
	LeaveSkewNs *int64 `parquet:"leave_skew_ns,optional"`
	WaitNs      *int64 `parquet:"wait_ns,optional"`
	TransferNs  *int64 `parquet:"transfer_ns,optional"`
	// AlgBWGBps is the collective's bytes over TransferNs, in GB/s
	// (1e9 B/s); BusBWGBps that times NCCL's bus factor for the kind and
	// the number of participants (nccl-tests' busbw). NULL without bytes
	// or a transfer time.
	AlgBWGBps *float64 `parquet:"algbw_gbps,optional"`
	BusBWGBps *float64 `parquet:"busbw_gbps,optional"`
}

// collectives emits one row per communication kernel of the model's rank
// in start order; none for a lone trace.
func (m *model) collectives(emit func(CollectiveRow) error) error {
	if m.rank == nil {
		return nil
	}
	j, ri := m.rank.job, m.rank.index
	r := j.run.Ranks[ri]
	for ci := range r.Collectives {
		c := &r.Collectives[ci]
		row := CollectiveRow{Run: m.run, Job: j.name, Rank: *m.rankCol, WorldSize: *m.worldCol, Kind: c.Kind, Kernel: c.Kernel,
			Stream: c.Stream, Start: m.at(c.Start), DurationNs: int64(c.Dur()), ExposedNs: int64(c.Exposed), DType: nonEmpty(c.Args.DType)}
		launched := c.Start
		if c.Launch >= 0 {
			launched = c.Launch
			row.Launch = ptr(m.at(c.Launch))
		}
		row.Step = m.stepNumber(launched)
		if c.HasArgs {
			a := &c.Args
			row.PGName, row.PGDesc, row.Collective = nonEmpty(a.GroupName), nonEmpty(a.GroupDesc), nonEmpty(a.Collective)
			row.Dimension = ptr(distributed.Dimension(a.GroupDesc, a.GroupName))
			row.InNelems, row.OutNelems = ptr(a.InNelems), ptr(a.OutNelems)
			if eb := distributed.DTypeBytes(a.DType); eb > 0 {
				row.InBytes, row.OutBytes = ptr(a.InNelems*eb), ptr(a.OutNelems*eb)
				row.Bytes = ptr(max(a.InNelems, a.OutNelems) * eb)
				if len(c.P2P) > 0 {
					// A send/recv kernel carries its sends and recvs
					// (a batched one several): in is what it sends,
					// out what it receives.
					sent, received := c.P2PBytes()
					row.InNelems, row.OutNelems = ptr(sent/eb), ptr(received/eb)
					row.InBytes, row.OutBytes, row.Bytes = ptr(sent), ptr(received), ptr(max(sent, received))
				}
			}
			if a.Seq >= 0 {
				row.Seq = ptr(a.Seq)
			}
		}
		if ref := j.calls[ri][ci]; ref.coll >= 0 {
			matched(&row, &j.run.Collectives[ref.coll], ref.part)
		}
		if err := emit(row); err != nil {
			return err
		}
	}
	return nil
}

// matched fills row's cross-rank columns from participant p of col.
func matched(row *CollectiveRow, col *distributed.Collective, p int) {
	row.Matched = true
	row.Participants = ptr(int32(len(col.Participants)))
	row.Seq, row.SeqFromOrder = ptr(col.Seq), col.SeqFromOrder
	row.ArriveSkewNs = ptr(int64(col.Arrive[p] - slices.Min(col.Arrive)))
	row.LeaveSkewNs = ptr(int64(col.Leave[p] - slices.Min(col.Leave)))
	row.WaitNs = ptr(int64(col.Wait(p)))
	tr := col.Transfer()
	row.TransferNs = ptr(int64(tr))
	if col.Bytes > 0 && tr > 0 {
		alg := float64(col.Bytes) / (float64(tr) / 1e9) / 1e9
		row.AlgBWGBps = ptr(alg)
		row.BusBWGBps = ptr(alg * distributed.BusFactor(col.Kind, len(col.Participants)))
	}
}

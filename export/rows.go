package export

import (
	"math"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/trace"
)

// model is what the row builders read: one trace, its analysis and the
// run's name. Builders only read it.
type model struct {
	run   string
	t     *trace.Trace
	r     *analyze.Result
	epoch int64 // added to trace times to make timestamps
	// v is analyze's view of its facts about t: each GPU activity's
	// step, category, launching op, user source line and autotune flag
	// are read from it, never derived again (nil in a light model).
	v *analyze.View
	// ranked is the rank columns' values, nil for a lone trace (NULL);
	// rankCol and worldCol point into it.
	ranked            *rankInfo
	rankCol, worldCol *int32
	// rank is the trace's place in its loaded job, for the collectives
	// table (nil: no rows).
	rank *jobRank
}

// rankInfo is what the rank columns say about a rank of a job.
type rankInfo struct {
	job         string
	rank, world int32
	from        string
}

// setRank gives the rank columns values.
func (m *model) setRank(ri rankInfo) {
	m.ranked = &ri
	m.rankCol, m.worldCol = &m.ranked.rank, &m.ranked.world
}

// setJobRank makes the model's trace rank r of its loaded job: the rank
// columns get the job's values and the collectives table rows.
func (m *model) setJobRank(r *jobRank) {
	m.rank = r
	m.setRank(r.info())
	// The run is one analysis: its cross-rank findings are ranked with
	// each rank's own, as `findings DIR` and `report DIR` rank them.
	if m.r != nil && r.job.cross != nil {
		m.r.AddRunFindings(r.job.run.Ranks[r.index].Rank, r.job.cross)
	}
}

// light returns a model that keeps of m only what the collectives, runs
// and findings tables need (the run's name, its steps and clock, the
// rank, the findings and what ranks them): a job's ranks wait for each
// other before those tables are written, and must not hold their full
// traces meanwhile.
func (m *model) light() *model {
	r := &analyze.Result{StepStats: m.r.StepStats, Summary: m.r.Summary, Findings: m.r.Findings, Overlaps: m.r.Overlaps}
	return &model{run: m.run, t: &trace.Trace{Steps: m.t.Steps}, epoch: m.epoch, r: r}
}

// newModel returns the model of run: r's analysis of the trace it
// analyzed (r.View().Trace(), whose steps are analyze's).
func newModel(run string, r *analyze.Result) *model {
	v := r.View()
	t := v.Trace()
	return &model{run: run, t: t, r: r, v: v, epoch: t.Meta.BaseTimeNanoseconds}
}

// at turns a trace time into a timestamp column's value.
func (m *model) at(t trace.Time) int64 { return int64(t) + m.epoch }

// ns turns one of analyze's microsecond figures back into nanoseconds.
// They were computed from integer nanoseconds, so rounding restores them.
func ns(us float64) int64 { return int64(math.Round(us * 1e3)) }

// stepNumber returns the number of the step containing at, or nil (an
// op's step: the one it started in, as analyze counts CPU op time).
func (m *model) stepNumber(at trace.Time) *int32 {
	i := m.t.StepOf(at)
	if i < 0 {
		return nil
	}
	n := int32(m.t.Steps[i].Number)
	return &n
}

func ptr[T any](v T) *T { return &v }

// nonEmpty returns &s, or nil for "".
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// runRow describes the run; hash and size are the input file's.
func (m *model) runRow(source, hash string, size int64) RunRow {
	t, md := m.t, &m.t.Meta
	span := t.Span()
	row := RunRow{
		Run: m.run, Source: source, ContentHash: hash, InputBytes: size, SchemaVersion: SchemaVersion, AnalysisVersion: analyze.SchemaVersion,
		Format: md.Format, Framework: md.Framework, Device: nonEmpty(t.DeviceName()), Devices: int32(len(md.Devices)),
		Clock: "trace", Start: m.at(span.Start), WallNs: int64(span.Dur()), Events: int64(t.Events),
		Kernels: int64(t.Kernels()), Steps: int32(len(t.Steps)), StepsSynthetic: m.r.Summary.StepsSynthetic,
	}
	if m.epoch != 0 {
		row.Clock = "unix"
	}
	m.rankColumns(&row)
	positive := func(v int) *int32 {
		if v <= 0 {
			return nil
		}
		return ptr(int32(v))
	}
	row.CUDADriverVersion = positive(md.CUDADriverVersion)
	row.CUDARuntimeVersion = positive(md.CUDARuntimeVersion)
	row.CUPTIVersion = positive(md.CUPTIVersion)
	row.TraceSchemaVersion = positive(md.SchemaVersion)
	return row
}

// rankColumns sets the runs row's job and rank columns.
func (m *model) rankColumns(row *RunRow) {
	row.Job, row.Rank, row.WorldSize, row.RankFrom = nil, nil, nil, nil
	row.GPUBusyNs, row.GPUSpinNs = nil, nil
	if m.ranked != nil {
		row.Job, row.Rank, row.WorldSize, row.RankFrom = &m.ranked.job, m.rankCol, m.worldCol, &m.ranked.from
	}
	if m.rank != nil {
		// The run's figure for this rank, its spinning left out.
		s := m.rank.job.run.Stats[m.rank.index]
		row.GPUBusyNs, row.GPUSpinNs = ptr(int64(s.GPUBusy)), ptr(int64(s.GPUSpin))
	}
}

// kernels emits one row per GPU activity, in the model's order.
func (m *model) kernels(emit func(KernelRow) error) error {
	t := m.t
	short := map[string]string{}
	for i := range t.GPU {
		g := &t.GPU[i]
		row := KernelRow{
			Run: m.run, Rank: m.rankCol, WorldSize: m.worldCol, Kind: g.Kind.String(), Device: g.Device, Stream: g.Stream, Name: g.Name,
			Category: m.v.Category(i), Start: m.at(g.Start), DurationNs: int64(g.Dur()), Correlation: g.Correlation,
			GridX: g.Grid[0], GridY: g.Grid[1], GridZ: g.Grid[2], BlockX: g.Block[0], BlockY: g.Block[1], BlockZ: g.Block[2],
			Registers: g.Registers, SharedMem: g.SharedMem, Autotune: m.v.Autotune(i),
		}
		s, ok := short[g.Name]
		if !ok {
			s = analyze.ShortKernelName(g.Name)
			short[g.Name] = s
		}
		row.ShortName = s
		if n, ok := m.v.StepNumber(i); ok {
			row.Step = ptr(int32(n))
		}
		if op := m.v.Op(i); op != trace.None {
			row.Op = &t.Ops[op].Name
			row.DType = nonEmpty(analyze.OpDType(t.Ops[op].InputTypes))
		}
		row.Python = nonEmpty(m.v.UserLine(i))
		if g.Kind != trace.Kernel {
			row.Bytes = ptr(g.Bytes)
			if g.Kind == trace.Memcpy {
				row.CopyKind = ptr(g.Copy.String())
			}
		}
		if err := emit(row); err != nil {
			return err
		}
	}
	return nil
}

// ops emits one row per framework op.
func (m *model) ops(emit func(OpRow) error) error {
	t := m.t
	for i := range t.Ops {
		o := &t.Ops[i]
		row := OpRow{Run: m.run, Rank: m.rankCol, WorldSize: m.worldCol, ID: int64(i), Name: o.Name, Step: m.stepNumber(o.Start), Start: m.at(o.Start), DurationNs: int64(o.Dur()),
			InputDims: nonEmpty(o.InputDims), InputTypes: nonEmpty(o.InputTypes)}
		if o.Parent != trace.None {
			row.ParentID = ptr(int64(o.Parent))
		}
		if o.Thread != trace.None {
			row.Thread = t.Threads[o.Thread].TID
		}
		if o.Flops > 0 {
			row.Flops = ptr(o.Flops)
		}
		if err := emit(row); err != nil {
			return err
		}
	}
	return nil
}

// steps emits analyze's per-step figures. Result.Steps follows the
// steps of the trace analyze.WithSteps returns one to one; the start is
// read from Result.Steps so that a trace whose steps differ cannot
// misplace (or crash) a row.
func (m *model) steps(emit func(StepRow) error) error {
	origin := m.at(m.t.Span().Start)
	for _, s := range m.r.Steps {
		row := StepRow{Run: m.run, Rank: m.rankCol, WorldSize: m.worldCol, Step: int32(s.Number), Synthetic: s.Synthetic, Start: origin + ns(s.StartUs), WallNs: ns(s.WallUs),
			GPUBusyNs: ns(s.GPUBusyUs), GPUIdleNs: ns(s.GPUIdleUs), GPUBusyShare: s.GPUBusyShare,
			LaunchGapIdleNs: ns(s.LaunchGapIdleUs), LongGapIdleNs: ns(s.LongGapIdleUs), KernelNs: ns(s.KernelUs),
			Kernels: int32(s.Kernels), Memcpys: int32(s.Memcpys), Launches: int32(s.Launches), LaunchAPINs: ns(s.LaunchAPIUs), SyncNs: ns(s.SyncUs),
			ComputeBusyNs: ns(s.ComputeBusyUs), CommunicationNs: ns(s.CommunicationUs),
			ForwardNs: ns(s.ForwardUs), BackwardNs: ns(s.BackwardUs), OptimizerNs: ns(s.OptimizerUs)}
		if err := emit(row); err != nil {
			return err
		}
	}
	return nil
}

// findings emits the run's findings in their ranking.
func (m *model) findings(emit func(FindingRow) error) error {
	for i, f := range m.r.Findings {
		row := FindingRow{Run: m.run, Rank: m.rankCol, WorldSize: m.worldCol, Position: int32(i), ID: f.ID, Subject: f.Subject, Title: f.Title, Severity: f.Severity,
			SavingNs: f.SavingNs, Share: f.Share, SavingFrom: f.SavingFrom, GPUSavingNs: int64(math.Round(f.GPUSavingUs * 1e3)),
			OneOffNs: int64(math.Round(f.OneOffUs * 1e3)), Confidence: f.Confidence, Fix: f.Fix}
		if err := emit(row); err != nil {
			return err
		}
	}
	return nil
}

package export

// SchemaVersion is the version of the tables' schema, documented in
// docs/parquet-schema.md and written into every file's key/value metadata
// (MetaSchemaVersion) and the runs table. Adding a column or a table
// keeps it; renaming or removing a column, or changing a column's type or
// unit, bumps it. An export directory written with another version is
// exported again rather than skipped.
const SchemaVersion = 2

// Keys of the Parquet key/value metadata every table file carries.
const (
	MetaSchemaVersion = "tracelens.schema_version"
	MetaContentHash   = "tracelens.content_hash"
	MetaTable         = "tracelens.table"
	// MetaColumns is a hash of the table's Parquet schema (column names,
	// types, logical types, repetition): a resumed export redoes files
	// whose columns differ from what this build writes, even when
	// SchemaVersion was not bumped for an added column, so a directory
	// never mixes two shapes of one table.
	MetaColumns = "tracelens.columns"
	// MetaJobHash is, in the files of a rank of a multi-rank run, a hash
	// of every rank's run name and content hash: the rank columns and the
	// collectives' waits depend on all the ranks, so a resumed export
	// redoes a job's ranks when any of its files changed.
	MetaJobHash = "tracelens.job_hash"
)

// Table names: each is a directory under the output directory holding one
// Parquet file per exported trace, so an engine reads a table as a whole
// directory (DuckDB's read_parquet('out/kernels/*.parquet'), Spark's
// spark.read.parquet("out/kernels"), a Trino external table's location).
const (
	TableRuns        = "runs"
	TableKernels     = "kernels"
	TableOps         = "ops"
	TableSteps       = "steps"
	TableFindings    = "findings"
	TableCollectives = "collectives"
	// TableLedger and TableLedgerSegments are the step ledger's lines
	// and their intervals (ledger.go).
	TableLedger         = "ledger"
	TableLedgerSegments = "ledger_segments"
	// TableMemory is the device memory timeline (memory.go).
	TableMemory = "memory"
)

// Tables lists the tables in the order they are written; TableRuns comes
// last because its file marks a run as completely exported.
func Tables() []string {
	return []string{TableKernels, TableOps, TableSteps, TableLedger, TableLedgerSegments, TableMemory, TableCollectives, TableFindings, TableRuns}
}

// The row types below are the tables' schema. Conventions: every table
// has a run column (the exported run's name, a key into runs); instants
// are INT64 TIMESTAMP(NANOS) on the trace's clock (UTC Unix time when the
// trace states its epoch, see RunRow.Clock), written with isAdjustedToUTC
// false because DuckDB reads UTC-adjusted nanosecond timestamps as
// microsecond TIMESTAMPTZ and would drop the nanoseconds; lengths of time
// are INT64
// nanoseconds in columns ending in _ns; shares are fractions in [0, 1];
// optional columns are NULL when the trace cannot say (never 0 or "").

// RunRow is one exported trace: where it came from and what it is.
type RunRow struct {
	Run         string `parquet:"run,dict"`
	Source      string `parquet:"source"`
	ContentHash string `parquet:"content_hash"`
	InputBytes  int64  `parquet:"input_bytes"`
	// SchemaVersion is the export SchemaVersion the tables were written
	// with.
	SchemaVersion int32 `parquet:"schema_version"`
	// Job names the multi-rank run the trace is one rank of (the
	// directory its ranks were exported from, as a run name), NULL for a
	// trace exported on its own. Rank is its global rank
	// (distributedInfo.rank, else the rankN in its file name, else its
	// place among the job's files: RankFrom says which); WorldSize the
	// job's world size (distributedInfo.world_size, else the highest rank
	// + 1). All four are NULL for a trace exported on its own: one file
	// says too little to tell a single-GPU job from one rank of many.
	Job       *string `parquet:"job,optional,dict"`
	Rank      *int32  `parquet:"rank,optional"`
	WorldSize *int32  `parquet:"world_size,optional"`
	RankFrom  *string `parquet:"rank_from,optional,dict"`
	// AnalysisVersion is analyze.SchemaVersion: the version of the
	// definitions behind steps and findings (`report --format json`'s
	// schema_version).
	AnalysisVersion int32  `parquet:"analysis_version"`
	Format          string `parquet:"format,dict"`
	Framework       string `parquet:"framework,dict"`
	// Device is the first GPU's name; Devices counts the GPUs the trace
	// describes.
	Device  *string `parquet:"device,optional,dict"`
	Devices int32   `parquet:"devices"`
	// The trace's own versions, NULL when it does not state them.
	CUDADriverVersion  *int32 `parquet:"cuda_driver_version,optional"`
	CUDARuntimeVersion *int32 `parquet:"cuda_runtime_version,optional"`
	CUPTIVersion       *int32 `parquet:"cupti_version,optional"`
	TraceSchemaVersion *int32 `parquet:"trace_schema_version,optional"`
	// Clock is "unix" when timestamps are Unix time (the trace gives its
	// epoch: Kineto's baseTimeNanoseconds), "trace" when they are the
	// profiler's own clock counted from 1970-01-01 (only differences
	// between them mean anything).
	Clock  string `parquet:"clock,dict"`
	Start  int64  `parquet:"start,timestamp(nanosecond:local)"`
	WallNs int64  `parquet:"wall_ns"`
	Events int64  `parquet:"events"`
	// Kernels counts kernel launches (memcpy and memset excluded).
	Kernels int64 `parquet:"kernels"`
	Steps   int32 `parquet:"steps"`
	// StepsSynthetic is true when the trace marks no steps and the whole
	// trace is step 0.
	StepsSynthetic bool `parquet:"steps_synthetic"`
	// GPUBusyNs is, for one rank of a job, its GPU busy time over the
	// trace (the union of its kernels, copies and sets) less GPUSpinNs,
	// the time its communication kernels only spun waiting for a later
	// rank: distributed's per-rank gpu_busy_us and gpu_spin_us, the
	// figure every face shows. NULL for a trace exported on its own.
	GPUBusyNs *int64 `parquet:"gpu_busy_ns,optional"`
	GPUSpinNs *int64 `parquet:"gpu_spin_ns,optional"`
}

// KernelRow is one GPU activity: a kernel launch, a memcpy or a memset.
type KernelRow struct {
	Run string `parquet:"run,dict"`
	// Rank and WorldSize are the trace's rank in its multi-rank run and
	// the run's world size (see RunRow.Rank), NULL for a trace exported
	// on its own.
	Rank      *int32 `parquet:"rank,optional"`
	WorldSize *int32 `parquet:"world_size,optional"`
	// Kind is "kernel", "memcpy" or "memset".
	Kind   string `parquet:"kind,dict"`
	Device int32  `parquet:"device"`
	Stream int32  `parquet:"stream"`
	// Step is the number of the step the activity was launched in (by
	// the launch call's start, else the activity's), NULL outside steps.
	Step *int32 `parquet:"step,optional"`
	Name string `parquet:"name,dict"`
	// ShortName is the name without return type, namespaces and
	// parameters; Category is tracelens's kernel category (gemm,
	// attention, elementwise, ..., custom).
	ShortName string `parquet:"short_name,dict"`
	Category  string `parquet:"category,dict"`
	// Autotune is true for the launches torch.compile's autotuner or
	// compiler made (analyze.AutotuneLaunches): the report lists them in
	// rows of their own, apart from the workload's.
	Autotune    bool  `parquet:"autotune"`
	Start       int64 `parquet:"start,timestamp(nanosecond:local)"`
	DurationNs  int64 `parquet:"duration_ns"`
	Correlation int64 `parquet:"correlation"`
	// Op is the innermost framework op around the launch; Python the
	// user-code source line ("train.py(42): forward") that led to it.
	Op     *string `parquet:"op,optional,dict"`
	Python *string `parquet:"python,optional,dict"`
	// Launch configuration, zero when the trace does not record it.
	GridX     int32 `parquet:"grid_x"`
	GridY     int32 `parquet:"grid_y"`
	GridZ     int32 `parquet:"grid_z"`
	BlockX    int32 `parquet:"block_x"`
	BlockY    int32 `parquet:"block_y"`
	BlockZ    int32 `parquet:"block_z"`
	Registers int32 `parquet:"registers"`
	SharedMem int32 `parquet:"shared_mem_bytes"`
	// DType is the element type of the launching op's first tensor input
	// (fp32, bf16, ...), NULL when the op records no types.
	DType *string `parquet:"dtype,optional,dict"`
	// Bytes and CopyKind describe memcpy and memset activities (NULL for
	// kernels).
	Bytes    *int64  `parquet:"bytes,optional"`
	CopyKind *string `parquet:"copy_kind,optional,dict"`
}

// OpRow is one framework operator call on the CPU (aten::mm, ...).
type OpRow struct {
	Run string `parquet:"run,dict"`
	// Rank and WorldSize are the trace's rank in its multi-rank run and
	// the run's world size (see RunRow.Rank), NULL for a trace exported
	// on its own.
	Rank      *int32 `parquet:"rank,optional"`
	WorldSize *int32 `parquet:"world_size,optional"`
	// ID numbers the run's ops; ParentID is the enclosing op's ID on the
	// same thread, NULL for a top-level op.
	ID       int64  `parquet:"id"`
	ParentID *int64 `parquet:"parent_id,optional"`
	Thread   string `parquet:"thread,dict"`
	Name     string `parquet:"name,dict"`
	// Step is the number of the step the op started in, NULL outside.
	Step       *int32 `parquet:"step,optional"`
	Start      int64  `parquet:"start,timestamp(nanosecond:local)"`
	DurationNs int64  `parquet:"duration_ns"`
	// InputDims and InputTypes are the profiler's text (record_shapes),
	// NULL when not recorded; Flops its FLOP estimate (with_flops).
	InputDims  *string  `parquet:"input_dims,optional,dict"`
	InputTypes *string  `parquet:"input_types,optional,dict"`
	Flops      *float64 `parquet:"flops,optional"`
}

// StepRow is one iteration's figures, as `tracelens report` computes them.
type StepRow struct {
	Run string `parquet:"run,dict"`
	// Rank and WorldSize are the trace's rank in its multi-rank run and
	// the run's world size (see RunRow.Rank), NULL for a trace exported
	// on its own.
	Rank      *int32 `parquet:"rank,optional"`
	WorldSize *int32 `parquet:"world_size,optional"`
	Step      int32  `parquet:"step"`
	Synthetic bool   `parquet:"synthetic"`
	Start     int64  `parquet:"start,timestamp(nanosecond:local)"`
	WallNs    int64  `parquet:"wall_ns"`
	// GPUBusyNs is the union of kernel, memcpy and memset intervals in
	// the step, summed over devices; GPUIdleNs is wall × devices minus it,
	// split into launch gaps (shorter than analyze.LaunchGap) and long
	// gaps (the host busy elsewhere).
	GPUBusyNs       int64   `parquet:"gpu_busy_ns"`
	GPUIdleNs       int64   `parquet:"gpu_idle_ns"`
	GPUBusyShare    float64 `parquet:"gpu_busy_share"`
	LaunchGapIdleNs int64   `parquet:"launch_gap_idle_ns"`
	LongGapIdleNs   int64   `parquet:"long_gap_idle_ns"`
	// KernelNs sums the durations of kernels launched in the step.
	KernelNs    int64 `parquet:"kernel_ns"`
	Kernels     int32 `parquet:"kernels"`
	Memcpys     int32 `parquet:"memcpys"`
	Launches    int32 `parquet:"launches"`
	LaunchAPINs int64 `parquet:"launch_api_ns"`
	SyncNs      int64 `parquet:"sync_ns"`
	// ComputeBusyNs and CommunicationNs split GPU busy time: the union of
	// non-communication activity and of communication (NCCL/RCCL)
	// kernels, summed over devices.
	ComputeBusyNs   int64 `parquet:"compute_busy_ns"`
	CommunicationNs int64 `parquet:"communication_ns"`
	// ForwardNs, BackwardNs and OptimizerNs split KernelNs by the part of
	// the training step that launched each kernel (backward: autograd's
	// evaluate_function ops; optimizer: Optimizer.step/zero_grad ranges;
	// forward: the rest).
	ForwardNs   int64 `parquet:"forward_ns"`
	BackwardNs  int64 `parquet:"backward_ns"`
	OptimizerNs int64 `parquet:"optimizer_ns"`
}

// FindingRow is one finding of one run.
type FindingRow struct {
	Run string `parquet:"run,dict"`
	// Rank and WorldSize are the trace's rank in its multi-rank run and
	// the run's world size (see RunRow.Rank), NULL for a trace exported
	// on its own.
	Rank      *int32 `parquet:"rank,optional"`
	WorldSize *int32 `parquet:"world_size,optional"`
	// Position is the finding's place in the run's ranking (0 = largest
	// saving), as `tracelens findings` lists them.
	Position int32 `parquet:"position"`
	// ID is the analyzer's name (fusion-candidate, host-sync, ...);
	// Subject names what the finding is about (a kernel, an op chain, a
	// call site), so findings of different runs match on (id, subject).
	ID       string `parquet:"id,dict"`
	Subject  string `parquet:"subject"`
	Title    string `parquet:"title"`
	Severity string `parquet:"severity,dict"`
	// SavingNs estimates the time saved per step if fixed, at most the
	// steady-state step; Share is it over that step, in [0, 1].
	// SavingFrom names the part of the step it comes out of (gpu_busy,
	// gpu_idle_launch_gaps, ...): savings from the same part overlap.
	SavingNs   int64   `parquet:"saving_ns"`
	Share      float64 `parquet:"share"`
	SavingFrom string  `parquet:"saving_from,dict"`
	// GPUSavingNs is, for a gpu_busy saving, the GPU time the fix saves
	// per step (SavingNs is the part of it that shortens the step);
	// OneOffNs is, for saving_from one_off (cold start, compilation), the
	// one-time cost (SavingNs is 0 then). Both 0 otherwise.
	GPUSavingNs int64  `parquet:"gpu_saving_ns"`
	OneOffNs    int64  `parquet:"one_off_ns"`
	Confidence  string `parquet:"confidence,dict"`
	Fix         string `parquet:"fix"`
}

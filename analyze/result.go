package analyze

// The types in this file are the JSON contract of `tracelens report
// --format json` and the Go API that report, tui and diff read. Fields may
// be added; existing names and JSON keys never change. Times are float64
// microseconds (the unit profilers and users think in) in fields ending in
// Us; trace.Duration(x*1e3) turns one back into a printable duration.

// Result is everything tracelens computes about one trace.
type Result struct {
	// SchemaVersion is the SchemaVersion the JSON was written with.
	SchemaVersion int     `json:"schema_version"`
	Source        string  `json:"source"`
	Device        string  `json:"device"`
	Framework     string  `json:"framework"`
	Summary       Summary `json:"summary"`
	// Kernels has one row per distinct kernel name, by total time
	// descending (as `top`).
	Kernels []Kernel `json:"kernels"`
	// Categories sums GPU time (kernels, memcpy, memset) per category, by
	// time descending.
	Categories []CategoryTime `json:"categories"`
	Steps      []Step         `json:"steps"`
	StepStats  StepStats      `json:"step_stats"`
	Launches   LaunchStats    `json:"launches"`
	// Ops is the key_averages()-like table of framework ops, by attributed
	// GPU time then total CPU time.
	Ops []OpStat `json:"ops"`
	// Annotations breaks time down per record_function range and per
	// nn.Module frame.
	Annotations []AnnotationStat `json:"annotations"`
	// Roofline has one row per GEMM-like op shape whose FLOPs are known.
	Roofline []RooflineRow `json:"roofline"`
	// TopRange is the record_function range with the most GPU time when
	// it leads the next by TopRangeLead or more; absent otherwise.
	TopRange *RangeLead `json:"top_range,omitempty"`
	// SameWork compares implementations of one GEMM shape and dtype in
	// Roofline whose throughput differs by SameWorkGap or more.
	SameWork []SameWork `json:"same_work"`
	// Findings are ranked by SavingUs, largest first.
	Findings []Finding `json:"findings"`
	// Overlaps lists the parts of the step that more than one finding's
	// saving comes out of, with the combined estimate for each.
	Overlaps []Overlap `json:"overlaps"`
	// ProfilerOptions lists the torch.profiler options the trace shows
	// were on and that inflate host times (with_stack, profile_memory,
	// record_shapes); findings resting on host time carry a caveat.
	ProfilerOptions []string `json:"profiler_options"`
	// ProfilerCost estimates the profiler's own host work per step and
	// the step without it (estimateProfilerCost); nil without steps.
	ProfilerCost *ProfilerCost `json:"profiler_cost,omitempty"`
	// Analyzers names the analyzers that ran, in run order.
	Analyzers []string `json:"analyzers"`
	// Memory is the device memory timeline from the allocator's [memory]
	// events (profile_memory=True); absent when the trace has none.
	Memory *Memory `json:"memory,omitempty"`
	// ledgerSegs holds, per step, each ledger line's intervals
	// (LedgerSegments).
	ledgerSegs []stepSegs
	// view is the read-only view of the facts Run computed (View).
	view *View
	// rankCombined is, once AddRunFindings made this a run's analysis,
	// the combined saving of the rank's own findings.
	rankCombined *float64
	// Corrections says what Run removed or bounded because it could not
	// be true (a roofline row above the device's peak, a share outside
	// 0–100 %, a saving above the step): each is a bug to report.
	Corrections []string `json:"corrections"`
}

// Summary extends `top --format json`'s summary (its first five fields are
// exactly top's) with whole-trace figures.
type Summary struct {
	Events          int     `json:"events"`
	KernelLaunches  int     `json:"kernel_launches"`
	DistinctKernels int     `json:"distinct_kernels"`
	GPUKernelUs     float64 `json:"gpu_kernel_us"`
	Device          string  `json:"device"`

	Format    string `json:"format"`
	Framework string `json:"framework"`
	// WallUs is the span covered by all timed events.
	WallUs float64 `json:"wall_us"`
	// GPUBusyUs is the union of kernel, memcpy and memset intervals, summed
	// over devices; GPUBusyShare is it over WallUs × devices.
	GPUBusyUs    float64 `json:"gpu_busy_us"`
	GPUBusyShare float64 `json:"gpu_busy_share"`
	// ComputeBusyUs is GPU busy time without communication kernels and
	// CommunicationUs the union of communication (NCCL/RCCL) kernels:
	// a collective waiting for another rank is not compute.
	ComputeBusyUs   float64 `json:"compute_busy_us"`
	CommunicationUs float64 `json:"communication_us"`
	Memcpys         int     `json:"memcpys"`
	MemcpyUs        float64 `json:"memcpy_us"`
	Memsets         int     `json:"memsets"`
	MemsetUs        float64 `json:"memset_us"`
	// GPUActivityUs sums the durations of every kernel, memcpy and memset
	// (the Categories' TotalUs): the whole that CategoryTime.Share is of.
	GPUActivityUs float64 `json:"gpu_activity_us"`
	Steps         int     `json:"steps"`
	// StepsSynthetic is true when the trace marks no ProfilerStep#N and the
	// whole trace counts as one step.
	StepsSynthetic bool `json:"steps_synthetic"`
	// StepSource says where the steps come from: StepSourceProfiler
	// (ProfilerStep#N), StepSourceRange (a repeated top-level
	// record_function range), StepSourceCall (repeated calls of one user
	// Python function), StepSourceJit (repeated calls of one jitted JAX
	// function) or StepSourceTrace (the whole trace); StepLabel
	// names the range or function.
	StepSource string `json:"step_source"`
	StepLabel  string `json:"step_label,omitempty"`
	// ProfiledFrom is the number N of the first ProfilerStep#N (0 for
	// derived steps). N > 0 means earlier iterations ran unprofiled (the
	// schedule's wait and warm-up steps), so FirstStepIsFirstExecution is
	// false: the first profiled step is not a cold start. Otherwise the
	// first step is the first execution, and a single step (the steady
	// state then, schedule(active=1)) may carry warm-up.
	ProfiledFrom              int  `json:"profiled_from"`
	FirstStepIsFirstExecution bool `json:"first_step_is_first_execution"`
	// CombinedSavingUs is the saving per step if every finding were
	// fixed, counting savings that come out of the same part of the step
	// once (see Overlaps): at most StepStats.SteadyWallUs.
	// CombinedSavingShare is it over that step.
	CombinedSavingUs    float64 `json:"combined_saving_us"`
	CombinedSavingShare float64 `json:"combined_saving_share"`
}

// Overlap is a part of the step (a Finding.SavingFrom) that several
// findings' savings come out of and that is shorter than their sum:
// fixing them all saves at most the time that part takes.
type Overlap struct {
	SavingFrom string `json:"saving_from"`
	// Findings are indexes into Result.Findings.
	Findings []int `json:"findings"`
	// SumUs adds the findings' savings; AvailableUs is the median time per
	// steady-state step in that part; CombinedUs is the estimate for
	// fixing all of them: the smaller of the two.
	SumUs       float64 `json:"sum_us"`
	AvailableUs float64 `json:"available_us"`
	CombinedUs  float64 `json:"combined_us"`
}

// KernelTiming is one row of `tracelens top --format json`: every launch
// of one kernel name, in microseconds. Kernel embeds it, so the report's
// JSON extends top's without restating it.
type KernelTiming struct {
	Name string `json:"name"`
	// Autotune marks launches torch.compile's autotuner made while
	// compiling (benchmark runs, cache flushes): not the workload.
	Autotune bool    `json:"autotune,omitempty"`
	Count    int     `json:"count"`
	TotalUs  float64 `json:"total_us"`
	MeanUs   float64 `json:"mean_us"`
	MedianUs float64 `json:"median_us"`
	P95Us    float64 `json:"p95_us"`
	MinUs    float64 `json:"min_us"`
	MaxUs    float64 `json:"max_us"`
	Share    float64 `json:"share"`
}

// Kernel is one distinct kernel name: `top`'s fields plus what launched it.
type Kernel struct {
	KernelTiming

	// ShortName is analyze.ShortKernelName(Name), for tables.
	ShortName string `json:"short_name"`
	// CumulativeShare is the share of kernel time of this kernel and
	// every one above it in Kernels: what "the top N take" quotes.
	CumulativeShare float64 `json:"cumulative_share"`
	// Category is one of the Category* constants.
	Category string `json:"category"`
	// Ops are the framework ops that launched it (innermost op around the
	// launch), most launches first, at most MaxAttribution.
	Ops []string `json:"ops"`
	// Python are the user-code source lines ("model.py(42): forward")
	// whose calls launched it, most launches first, at most MaxAttribution.
	Python []string `json:"python"`
	// PerStep has one entry per element of Result.Steps: the launches
	// and GPU time of this kernel in that step (by launch time, as
	// Step.Kernels counts them). OutsideSteps counts launches in no step.
	PerStep      []StepShare `json:"per_step"`
	OutsideSteps int         `json:"outside_steps"`
}

// StepShare is what one kernel or category took in one step.
type StepShare struct {
	Count int     `json:"count"`
	Us    float64 `json:"us"`
}

// MaxAttribution bounds the ops and Python lines listed per kernel.
const MaxAttribution = 3

// CategoryTime is the GPU time of one kernel category.
type CategoryTime struct {
	Category string  `json:"category"`
	Count    int     `json:"count"`
	TotalUs  float64 `json:"total_us"`
	// Share is TotalUs over all GPU activity time (kernels, memcpy, memset).
	Share float64 `json:"share"`
	// PerStep has one entry per element of Result.Steps (see Kernel).
	PerStep []StepShare `json:"per_step"`
}

// Step is one iteration's figures. Its GPU work is the work it launched
// (see Steps), measured in the step's span: the host's step interval, or
// the extent of that work on the GPU when longer (asynchronous steps and
// CUDA-graph replays, whose GPU work outlasts the host's); launches are
// counted by when the launch call started.
type Step struct {
	Number    int  `json:"number"`
	Synthetic bool `json:"synthetic"`
	// StartUs is the step start relative to the trace's first event.
	StartUs float64 `json:"start_us"`
	// WallUs is the step's real duration: the host's step interval
	// (HostWallUs), or the extent of the GPU work the step launched when
	// that is longer (the GPU sets the pace: asynchronous steps, CUDA-graph
	// replays). Every "per step" share is over it.
	WallUs float64 `json:"wall_us"`
	// HostWallUs is the host's step interval (ProfilerStep#N, or the
	// range or call marking the step).
	HostWallUs float64 `json:"host_wall_us"`
	// PeriodUs is the step as the user experiences it: the period at
	// which the pipeline completes steps, the longer of HostPeriodUs (the
	// host's start of the next step minus its start of this one) and
	// GPUPeriodUs (the first GPU work the next step launched minus the
	// first this one launched, by correlation); PeriodBound says which
	// (BoundGPU for a host-ahead run, BoundHost for a GPU-starved one).
	// See stepPeriods for the last step.
	PeriodUs     float64 `json:"period_us"`
	HostPeriodUs float64 `json:"host_period_us"`
	GPUPeriodUs  float64 `json:"gpu_period_us"`
	PeriodBound  string  `json:"period_bound"`
	// GPUBusyUs is the union of the kernel, memcpy and memset intervals
	// the step launched, inside its span, summed over devices; GPUIdleUs is
	// WallUs × devices minus it, so GPUBusyShare is within [0, 1].
	GPUBusyUs    float64 `json:"gpu_busy_us"`
	GPUIdleUs    float64 `json:"gpu_idle_us"`
	GPUBusyShare float64 `json:"gpu_busy_share"`
	// ComputeBusyUs and CommunicationUs split GPU busy time as in
	// Summary.
	ComputeBusyUs   float64 `json:"compute_busy_us"`
	CommunicationUs float64 `json:"communication_us"`
	// LaunchGapIdleUs is GPU idle time in gaps shorter than LaunchGap
	// (the GPU waiting for the next launch); LongGapIdleUs in longer gaps
	// (the host doing something else: data loading, Python work, syncs).
	LaunchGapIdleUs float64 `json:"launch_gap_idle_us"`
	LongGapIdleUs   float64 `json:"long_gap_idle_us"`
	// IrreducibleGPUUs is GPU work of the step no fix removes: its
	// largest kernel time (inside its window) at the most a fix speeds
	// that kernel up (kernelSpeedup: a tensor-core kernel by the device's
	// fastest over its fp64 peak, any other by 2; fusion keeps it). Copies
	// are not counted: the pageable-copy model keeps their time itself.
	IrreducibleGPUUs float64 `json:"irreducible_gpu_us"`
	// GPUBoundUs is the GPU time of the step's activities during which the
	// GPU was the bottleneck (the Critical fact: the next activity on the
	// stream was queued, or the host blocked on the GPU), at most
	// GPUBusyUs. Only GPU time saved out of it shortens the step.
	GPUBoundUs float64 `json:"gpu_bound_us"`
	// KernelUs sums the durations of kernels that started in the step.
	KernelUs float64 `json:"kernel_us"`
	Kernels  int     `json:"kernels"`
	Memcpys  int     `json:"memcpys"`
	// Launches counts launch API calls (cudaLaunchKernel, cuLaunchKernel,
	// cudaGraphLaunch, cudaMemcpyAsync, ...) that started in the step and
	// LaunchAPIUs their total duration.
	Launches    int     `json:"launches"`
	LaunchAPIUs float64 `json:"launch_api_us"`
	// SyncUs is time in blocking synchronisation calls (see host-sync).
	SyncUs float64 `json:"sync_us"`
	// ForwardUs, BackwardUs and OptimizerUs split KernelUs by the part of
	// the training step that launched each kernel (backward: autograd's
	// evaluate_function ops, on whichever thread; optimizer: torch.optim's
	// Optimizer.step#/zero_grad# ranges; forward: the rest).
	ForwardUs   float64 `json:"forward_us"`
	BackwardUs  float64 `json:"backward_us"`
	OptimizerUs float64 `json:"optimizer_us"`
	// CPUOpUs is the time of top-level framework ops that started in the
	// step (nested ops are inside them).
	CPUOpUs float64 `json:"cpu_op_us"`
	// Ledger splits WallUs into exclusive lines (every Line* in
	// LedgerLines order, zeros included) that add up to it: what the GPU
	// and, while it was idle, the host spent the step on.
	Ledger []LedgerEntry `json:"ledger"`
}

// StepStats are medians over steps, with and without the first step (which
// usually carries warm-up: allocator growth, cuBLAS handles, compilation).
type StepStats struct {
	Count                    int     `json:"count"`
	MedianWallUs             float64 `json:"median_wall_us"`
	MedianWallUsNoFirst      float64 `json:"median_wall_us_no_first"`
	MedianGPUBusyUs          float64 `json:"median_gpu_busy_us"`
	MedianGPUBusyUsNoFirst   float64 `json:"median_gpu_busy_us_no_first"`
	MedianLaunches           float64 `json:"median_launches"`
	MedianLaunchesNoFirst    float64 `json:"median_launches_no_first"`
	MedianLaunchAPIUs        float64 `json:"median_launch_api_us"`
	MedianLaunchAPIUsNoFirst float64 `json:"median_launch_api_us_no_first"`
	// FirstStepUs is the first step's wall time, to compare with the
	// median (cold start).
	FirstStepUs float64 `json:"first_step_us"`
	// MedianForwardUs, MedianBackwardUs and MedianOptimizerUs are the
	// medians of the steps' phase kernel times after the first step.
	MedianForwardUs   float64 `json:"median_forward_us"`
	MedianBackwardUs  float64 `json:"median_backward_us"`
	MedianOptimizerUs float64 `json:"median_optimizer_us"`

	// The steady state is the steps after the first (which carries
	// warm-up), or the only step. These medians over it are the figures
	// every face quotes as "the step": step time, GPU busy, kernels and
	// launches per step; finding shares are over SteadyWallUs (the median
	// of the steps' WallUs: their real duration, not only the host's).
	SteadySteps        int     `json:"steady_steps"`
	SteadyWallUs       float64 `json:"steady_wall_us"`
	SteadyGPUBusyUs    float64 `json:"steady_gpu_busy_us"`
	SteadyGPUBusyShare float64 `json:"steady_gpu_busy_share"`
	SteadyGPUIdleUs    float64 `json:"steady_gpu_idle_us"`
	SteadyLaunchGapUs  float64 `json:"steady_launch_gap_idle_us"`
	SteadyLongGapUs    float64 `json:"steady_long_gap_idle_us"`
	SteadyKernels      float64 `json:"steady_kernels"`
	SteadyLaunches     float64 `json:"steady_launches"`
	SteadyLaunchAPIUs  float64 `json:"steady_launch_api_us"`
	// SteadyIrreducibleUs is GPU work no fix removes from the step (the
	// median of the steps' IrreducibleGPUUs): savings out of GPU busy time
	// stop short of it, so "all findings fixed" leaves at least it.
	SteadyIrreducibleUs float64 `json:"steady_irreducible_gpu_us"`
	// SteadyGPUBoundUs is the median of the steps' GPUBoundUs: savings
	// out of GPU busy time shorten the step by at most it.
	SteadyGPUBoundUs float64 `json:"steady_gpu_bound_us"`
	// SteadyLedger is the ledger of the steady step: each line's mean
	// share of the steady steps' walls times SteadyWallUs, so its lines
	// add up to SteadyWallUs. Findings' savings draw on its lines
	// (Finding.LedgerLines) and are bounded by them.
	SteadyLedger []LedgerEntry `json:"steady_ledger"`
	// SteadyPeriodUs, SteadyHostPeriodUs and SteadyGPUPeriodUs are the
	// medians of the steady steps' PeriodUs, HostPeriodUs and GPUPeriodUs:
	// the step time as the user experiences it, and the two periods it is
	// the longer of; SteadyPeriodBound is BoundGPU when most steady steps
	// are GPU-bound, else BoundHost.
	SteadyPeriodUs     float64 `json:"steady_period_us"`
	SteadyHostPeriodUs float64 `json:"steady_host_period_us"`
	SteadyGPUPeriodUs  float64 `json:"steady_gpu_period_us"`
	SteadyPeriodBound  string  `json:"steady_period_bound"`
	// SteadyCategories is GPU time per kernel category in the steady
	// step (autotune launches left out), by time descending: the
	// category figures "per step" sentences quote, where Categories is
	// the whole trace (compilation and autotuning included).
	SteadyCategories []SteadyCategory `json:"steady_categories"`

	// Median and MedianNoFirst are the per-column medians of the steps
	// and of the steps after the first (the step table's summary rows;
	// Number, StartUs and Synthetic are zero, counts rounded medians).
	Median        Step `json:"median_step"`
	MedianNoFirst Step `json:"median_step_no_first"`
	// MinWallUs and MaxWallUs are the fastest and slowest step's WallUs,
	// MinWallStep and MaxWallStep their numbers; WallSpread is their
	// difference over MedianWallUs (may exceed 1).
	MinWallUs   float64 `json:"min_wall_us"`
	MinWallStep int     `json:"min_wall_step"`
	MaxWallUs   float64 `json:"max_wall_us"`
	MaxWallStep int     `json:"max_wall_step"`
	WallSpread  float64 `json:"wall_spread"`
	// FirstStepRatio is FirstStepUs over MedianWallUsNoFirst, with three
	// steps or more (0 otherwise); WarmUp is true when it is above
	// WarmUpRatio: the first step carries warm-up.
	FirstStepRatio float64 `json:"first_step_ratio"`
	WarmUp         bool    `json:"warm_up"`
	// SteadyGPUIdleShare is 1 − SteadyGPUBusyShare.
	SteadyGPUIdleShare float64 `json:"steady_gpu_idle_share"`
	// SteadyComputeShare is the median over the steady steps of the share
	// of the step the GPU spends in kernels other than communication.
	SteadyComputeShare float64 `json:"steady_compute_share"`
	// ComputeBound is true when SteadyComputeShare is at least
	// ComputeBoundShare: compute alone fills the step, so the GPU, not its
	// collectives, limits it.
	ComputeBound bool `json:"compute_bound"`
	// Bottleneck is what limits the steady step: BottleneckHost,
	// BottleneckPeer, BottleneckGPU or BottleneckCommunication ("" without steps or GPU
	// activity). The faces say it; they do not judge it again.
	Bottleneck string `json:"bottleneck"`
	// SteadyLaunchAPIIdleShare is SteadyLaunchAPIUs over SteadyGPUIdleUs,
	// at most 1: how much of the idle time launch calls could explain.
	SteadyLaunchAPIIdleShare float64 `json:"steady_launch_api_idle_share"`
	// SteadyKernelUs is the median kernel time per steady step. The two
	// means below are over the same median step, so that "N launches
	// taking T (T/N each)" adds up: SteadyLaunchAPIPerLaunchUs is
	// SteadyLaunchAPIUs over SteadyLaunches and SteadyKernelMeanUs
	// SteadyKernelUs over SteadyKernels (0 without launches or kernels).
	SteadyKernelUs             float64 `json:"steady_kernel_us"`
	SteadyLaunchAPIPerLaunchUs float64 `json:"steady_launch_api_per_launch_us"`
	SteadyKernelMeanUs         float64 `json:"steady_kernel_mean_us"`
	// ForwardShare, BackwardShare and OptimizerShare split the sum of
	// MedianForwardUs, MedianBackwardUs and MedianOptimizerUs.
	ForwardShare   float64 `json:"forward_share"`
	BackwardShare  float64 `json:"backward_share"`
	OptimizerShare float64 `json:"optimizer_share"`
}

// LaunchStats follow HTA's definitions: launch API duration is the CPU time
// of the launch call, queue delay is kernel start minus launch call end (0
// when the activity started before the call returned).
type LaunchStats struct {
	// Launches counts API calls that launched at least one GPU activity.
	Launches       int     `json:"launches"`
	APIUs          float64 `json:"api_us"`
	MeanAPIUs      float64 `json:"mean_api_us"`
	MedianAPIUs    float64 `json:"median_api_us"`
	P95APIUs       float64 `json:"p95_api_us"`
	MeanQueueUs    float64 `json:"mean_queue_us"`
	MedianQueueUs  float64 `json:"median_queue_us"`
	P95QueueUs     float64 `json:"p95_queue_us"`
	MeanKernelUs   float64 `json:"mean_kernel_us"`
	MedianKernelUs float64 `json:"median_kernel_us"`
	// ShortKernels counts kernels shorter than ShortKernel.
	ShortKernels     int     `json:"short_kernels"`
	ShortKernelShare float64 `json:"short_kernel_share"`
	// PerStep is the median number of launches per step.
	PerStep float64 `json:"per_step"`
	// SyncCalls and SyncUs count blocking synchronisation calls.
	SyncCalls int     `json:"sync_calls"`
	SyncUs    float64 `json:"sync_us"`
}

// OpStat is one row of a key_averages()-like table, grouped by op name.
type OpStat struct {
	Name  string `json:"name"`
	Calls int    `json:"calls"`
	// TotalCPUUs is the wall time of the op's calls (nested calls of the
	// same name count once); SelfCPUUs excludes child ops.
	TotalCPUUs float64 `json:"total_cpu_us"`
	SelfCPUUs  float64 `json:"self_cpu_us"`
	// GPUUs is the GPU time of activities launched inside the op (children
	// included); SelfGPUUs of those launched with it as the innermost op.
	GPUUs     float64 `json:"gpu_us"`
	SelfGPUUs float64 `json:"self_gpu_us"`
	Kernels   int     `json:"kernels"`
	// PerStep has one entry per element of Result.Steps: the calls that
	// started in that step and their CPU time counted as in TotalCPUUs,
	// so per-step comparisons (diff) leave out warm-up and time outside
	// steps.
	PerStep []StepShare `json:"per_step"`
}

// Annotation kinds.
const (
	AnnotationRange  = "record_function"
	AnnotationModule = "module"
)

// AnnotationStat is the time under one record_function range name or one
// nn.Module frame.
type AnnotationStat struct {
	Name string `json:"name"`
	// Kind is AnnotationRange or AnnotationModule.
	Kind  string  `json:"kind"`
	Count int     `json:"count"`
	CPUUs float64 `json:"cpu_us"`
	// GPUUs is the GPU time of activities the range caused: those it
	// owns (the Ownership fact: launched inside it on its thread, by
	// correlation id, wherever and whenever they ran — not GPU busy time
	// inside its time window), plus the backward kernels autograd's
	// thread launched while it ran.
	GPUUs   float64 `json:"gpu_us"`
	Kernels int     `json:"kernels"`
	// MedianGPUUs is the median over its calls of the GPU time each call
	// owns on its own thread (backward kernels left out): the per-call
	// figure to compare two variants of one function by.
	MedianGPUUs float64 `json:"median_gpu_us"`
	// PerStep has one entry per element of Result.Steps: the ranges or
	// frames that started in that step and their CPU time.
	PerStep []StepShare `json:"per_step"`
}

// RooflineRow places one GEMM-like workload against the device's peaks.
type RooflineRow struct {
	// Op is the framework op (aten::mm) or, for kernels without one, the
	// kernel or annotation the FLOPs came from.
	Op     string `json:"op"`
	Shape  string `json:"shape"`
	DType  string `json:"dtype"`
	Kernel string `json:"kernel"`
	Calls  int    `json:"calls"`
	// MeanUs is the mean GPU time per call.
	MeanUs float64 `json:"mean_us"`
	// FLOPs and Bytes are per call; Bytes assumes each operand and the
	// result cross DRAM once.
	FLOPs float64 `json:"flops"`
	// FLOPsSource says where FLOPs came from: "profiler" (with_flops),
	// "input dims", or an assumption stated in words.
	FLOPsSource string  `json:"flops_source"`
	Bytes       float64 `json:"bytes"`
	TFLOPS      float64 `json:"tflops"`
	GBps        float64 `json:"gbps"`
	PeakTFLOPS  float64 `json:"peak_tflops"`
	PeakGBps    float64 `json:"peak_gbps"`
	// PeakSource names the datasheet the peaks come from, or says that
	// the device is unknown (no peaks, no bound).
	PeakSource string `json:"peak_source"`
	// Intensity is FLOPs per byte; Ridge is the device's peak FLOPs over
	// peak bandwidth: below it the op is memory bound.
	Intensity float64 `json:"intensity"`
	Ridge     float64 `json:"ridge"`
	// Bound is "compute" or "memory"; Efficiency is achieved over the
	// attainable peak for that bound.
	Bound      string  `json:"bound"`
	Efficiency float64 `json:"efficiency"`
	Python     string  `json:"python,omitempty"`
}

// Package trace is the in-memory model of one profiling run that every
// tracelens reader produces and every consumer (analyze, report, tui, diff)
// reads. It plays the role go/ast plays for Go source: readers in package
// ingest build it, nothing in it knows about any file format.
//
// All times are integer nanoseconds on the trace's own clock (Time), parsed
// exactly from the profiler's decimal microseconds. Links between events are
// indexes into the Trace's slices (-1 when absent), so the whole model is a
// handful of flat slices: cheap to build for millions of events and safe to
// share read-only between goroutines.
package trace

import (
	"fmt"
	"strings"
)

// Time is a point on the trace clock, in nanoseconds.
type Time int64

// Duration is a length of time in nanoseconds.
type Duration int64

// Micros returns d in microseconds, the unit profilers and users think in.
func (d Duration) Micros() float64 { return float64(d) / 1e3 }

// String formats d with a unit chosen for readability ("812ns", "3.4µs",
// "2.02ms", "1.50s").
func (d Duration) String() string {
	switch a := d; {
	case a < 0:
		return "-" + (-d).String()
	case a < 1000:
		return fmt.Sprintf("%dns", int64(d))
	case a < 1000_000:
		return trimFloat(float64(d)/1e3, "µs")
	case a < 1000_000_000:
		return trimFloat(float64(d)/1e6, "ms")
	default:
		return trimFloat(float64(d)/1e9, "s")
	}
}

func trimFloat(v float64, unit string) string {
	var s string
	switch {
	case v >= 100:
		s = fmt.Sprintf("%.0f", v)
	case v >= 10:
		s = fmt.Sprintf("%.1f", v)
	default:
		s = fmt.Sprintf("%.2f", v)
	}
	return s + unit
}

// Index refers to an element of one of the Trace's slices; None means no link.
type Index = int32

// None is the Index of a missing link.
const None Index = -1

// Span is what every timed event has: a name, the thread or stream it ran on
// and its interval [Start, End).
type Span struct {
	Name  string
	Start Time
	End   Time
}

// Dur returns the span's length.
func (s Span) Dur() Duration { return Duration(s.End - s.Start) }

// Contains reports whether o lies inside s (inclusive bounds, since profilers
// stamp a child and its parent with the same start or end).
func (s Span) Contains(o Span) bool { return o.Start >= s.Start && o.End <= s.End }

// GPUKind tells what a GPU activity is.
type GPUKind uint8

// The kinds of GPU activity.
const (
	Kernel GPUKind = iota
	Memcpy
	Memset
)

func (k GPUKind) String() string {
	switch k {
	case Kernel:
		return "kernel"
	case Memcpy:
		return "memcpy"
	case Memset:
		return "memset"
	}
	return fmt.Sprintf("GPUKind(%d)", uint8(k))
}

// CopyKind is the direction of a memcpy.
type CopyKind uint8

// Memcpy directions, as CUPTI names them.
const (
	CopyUnknown CopyKind = iota
	HtoD
	DtoH
	DtoD
	HtoH
	PtoP
)

var copyKindNames = [...]string{"?", "HtoD", "DtoH", "DtoD", "HtoH", "PtoP"}

func (k CopyKind) String() string {
	if int(k) < len(copyKindNames) {
		return copyKindNames[k]
	}
	return "?"
}

// MemKind is where a memcpy's source or destination lives.
type MemKind uint8

// Memory kinds, as CUPTI names them.
const (
	MemUnknown MemKind = iota
	Pageable
	Pinned
	Device
	Array
	Managed
)

var memKindNames = [...]string{"?", "Pageable", "Pinned", "Device", "Array", "Managed"}

func (k MemKind) String() string {
	if int(k) < len(memKindNames) {
		return memKindNames[k]
	}
	return "?"
}

// GPUActivity is one kernel, memcpy or memset executed on a GPU stream.
type GPUActivity struct {
	Span
	Kind   GPUKind
	Device int32
	Stream int32
	// Correlation is the id CUPTI gives the launch; it equals the launching
	// API call's Correlation.
	Correlation int64
	// ExternalID is the enclosing cpu op's External id as the profiler saw it
	// (0 when absent).
	ExternalID int64
	// Launch is the API call that launched it (APICalls index) or None.
	Launch Index

	// Kernel launch configuration (zero when unknown or not a kernel).
	Grid, Block [3]int32
	Registers   int32 // per thread
	SharedMem   int32 // bytes per block (static + dynamic)
	BlocksPerSM float32
	WarpsPerSM  float32
	// Occupancy is CUPTI's estimated achieved occupancy in percent, or -1
	// when the trace does not say.
	Occupancy float32

	// Memcpy/memset fields.
	Copy  CopyKind
	Src   MemKind
	Dst   MemKind
	Bytes int64
}

// Threads returns the number of threads the kernel launched (grid × block).
func (g *GPUActivity) Threads() int64 {
	var n int64 = 1
	for i := 0; i < 3; i++ {
		n *= int64(max(g.Grid[i], 1)) * int64(max(g.Block[i], 1))
	}
	return n
}

// APICall is a CUDA runtime or driver API call made on a host thread
// (cudaLaunchKernel, cuLaunchKernel, cudaStreamSynchronize, ...).
type APICall struct {
	Span
	Thread      Index // Threads index
	Correlation int64
	ExternalID  int64
	// Driver is true for driver API calls (cu*), false for runtime (cuda*).
	Driver bool
	// Op is the innermost cpu op enclosing the call (Ops index) or None.
	Op Index
	// Frame is the innermost Python frame enclosing the call or None.
	Frame Index
	// FirstGPU is the first GPU activity it launched, or None (most launch
	// calls launch one; the rest of a graph launch follows in GPU order).
	FirstGPU Index
}

// Op is a framework operator on the CPU (cat cpu_op: aten::mm, ...).
type Op struct {
	Span
	Thread     Index
	ExternalID int64
	// Parent is the enclosing op on the same thread, or None.
	Parent Index
	// Frame is the innermost Python frame enclosing the op, or None.
	Frame Index
	// InputDims and InputTypes keep the profiler's JSON text verbatim
	// (interned: shapes repeat), parsed on demand by Dims and Types.
	InputDims  string
	InputTypes string
	// Flops is the profiler's own FLOP estimate (with_flops), 0 if absent.
	Flops float64
}

// PyFrame is one Python function frame (cat python_function).
type PyFrame struct {
	Span
	Thread Index
	// Parent resolves PyParentID to a PyFrames index. (It sits next to
	// Thread so the two int32s share a word: 56 bytes a frame, not 64,
	// for the millions a torch.compile trace holds.)
	Parent Index
	// PyID and PyParentID are the profiler's own ids (Python id / Python
	// parent id).
	PyID       int64
	PyParentID int64
}

// Source splits a frame name like "model.py(42): forward" into file, line
// and function. ok is false for frames without a location ("<built-in
// method ...>").
func (f *PyFrame) Source() (file string, line int, fn string, ok bool) {
	return ParseFrameName(f.Name)
}

// ParseFrameName splits "file.py(42): func" into its parts.
func ParseFrameName(name string) (file string, line int, fn string, ok bool) {
	open := strings.IndexByte(name, '(')
	cls := strings.Index(name, "): ")
	if open <= 0 || cls < open {
		return "", 0, name, false
	}
	n := 0
	for _, c := range name[open+1 : cls] {
		if c < '0' || c > '9' {
			return "", 0, name, false
		}
		n = n*10 + int(c-'0')
	}
	return name[:open], n, name[cls+3:], true
}

// Annotation is a user range (record_function, ProfilerStep#N, JAX
// TraceMe) on a host thread, or a GPU-side annotation on a stream.
type Annotation struct {
	Span
	Thread Index // host thread, or None for GPU-side annotations
	Device int32 // GPU-side only
	Stream int32 // GPU-side only
	GPU    bool
}

// Step is one training/inference iteration, from ProfilerStep#N ranges or,
// when a trace has none, the whole trace as step 0 (Synthetic).
type Step struct {
	Span
	Number    int
	Synthetic bool
}

// MemoryEvent is an allocator instant event ([memory]).
type MemoryEvent struct {
	At        Time
	Thread    Index
	Device    int32 // -1 for CPU
	Bytes     int64 // positive for allocation, negative for free
	Allocated int64 // total allocated after the event, when known
	// Reserved is the allocator's total reserved (cached) memory after
	// the event ("Total Reserved"; 0 when not recorded).
	Reserved int64
	// Addr is the block's address (0 when not recorded): a free matches
	// the allocation at the same address before it.
	Addr int64
}

// Thread is a host thread as the trace names it.
type Thread struct {
	PID  string
	TID  string
	Name string
}

// DeviceProperties describes one GPU as the profiler recorded it.
type DeviceProperties struct {
	ID                 int
	Name               string
	TotalGlobalMem     int64
	ComputeMajor       int
	ComputeMinor       int
	NumSMs             int
	MaxThreadsPerSM    int
	RegsPerSM          int
	SharedMemPerSM     int64
	MaxThreadsPerBlock int
}

// FrameworkCapture is Metadata.Framework for traces written by tracelens
// capture (CUDA C kernels launched through the driver API, no Python).
const FrameworkCapture = "tracelens capture"

// FrameworkCUDA is Metadata.Framework for a CUDA C/C++ program profiled
// by another tool (an Nsight Systems export with no sign of Python).
const FrameworkCUDA = "CUDA C/C++"

// Metadata is what the trace says about itself.
type Metadata struct {
	// Format is the dialect the reader recognised ("kineto",
	// "kineto-legacy", "perfetto", "jax"), or "chrome" for Chrome trace
	// JSON that shows no sign of a known profiler.
	Format string
	// Framework names the producer ("PyTorch", "JAX", "tracelens capture").
	Framework           string
	SchemaVersion       int
	CUDADriverVersion   int
	CUDARuntimeVersion  int
	CUPTIVersion        int
	BaseTimeNanoseconds int64
	DisplayTimeUnit     string
	TraceName           string
	Devices             []DeviceProperties
	// Other keeps top-level scalar keys the model has no field for.
	Other map[string]string
}

// CUDAProgram reports whether the trace comes from a CUDA C/C++ program
// rather than a Python framework (tracelens capture, or an nsys export
// of a native program), so fixes speak its language.
func (m *Metadata) CUDAProgram() bool {
	return m.Framework == FrameworkCapture || m.Framework == FrameworkCUDA
}

// Skip counts events the reader did not put into the model, by reason.
type Skip struct {
	Reason string
	Count  int
	// FirstOffset is the byte offset of the first such event in the JSON
	// text, so a user can look at one.
	FirstOffset int64
}

// Trace is one profiling run.
type Trace struct {
	// Source is the file the trace was read from ("-" for stdin).
	Source string
	Meta   Metadata

	// GPU is every kernel, memcpy and memset, sorted by (Device, Stream,
	// Start).
	GPU []GPUActivity
	// APICalls, Ops, Frames and Annotations are sorted by (Thread, Start,
	// longest first), so parents precede children.
	APICalls       []APICall
	Ops            []Op
	Frames         []PyFrame
	Annotations    []Annotation
	GPUAnnotations []Annotation
	Steps          []Step
	Memory         []MemoryEvent
	Threads        []Thread

	// Categories counts events read by their "cat" (or dialect equivalent),
	// in first-seen order.
	Categories []CategoryCount
	// Events is the number of entries in the trace's event array.
	Events int
	// Skipped lists what was not modelled and why, sorted by reason.
	Skipped []Skip
	// Warnings say what the reader tolerated in the file and how (an event
	// array without its closing bracket, bytes after the gzip data), one
	// sentence each.
	Warnings []string
}

// CategoryCount is the number of events seen with one category.
type CategoryCount struct {
	Category string
	Count    int
}

// Device returns the properties of GPU id, or nil when the trace has none.
func (t *Trace) Device(id int32) *DeviceProperties {
	for i := range t.Meta.Devices {
		if t.Meta.Devices[i].ID == int(id) {
			return &t.Meta.Devices[i]
		}
	}
	return nil
}

// DeviceName names the trace's GPU (the first one), or "" when unknown.
func (t *Trace) DeviceName() string {
	if len(t.Meta.Devices) == 0 {
		return ""
	}
	return t.Meta.Devices[0].Name
}

// Span returns the interval covered by all timed events.
func (t *Trace) Span() Span {
	var s Span
	first := true
	add := func(a, b Time) {
		if first || a < s.Start {
			s.Start = a
		}
		if first || b > s.End {
			s.End = b
		}
		first = false
	}
	for i := range t.GPU {
		add(t.GPU[i].Start, t.GPU[i].End)
	}
	for i := range t.APICalls {
		add(t.APICalls[i].Start, t.APICalls[i].End)
	}
	for i := range t.Ops {
		add(t.Ops[i].Start, t.Ops[i].End)
	}
	for i := range t.Frames {
		add(t.Frames[i].Start, t.Frames[i].End)
	}
	for i := range t.Annotations {
		add(t.Annotations[i].Start, t.Annotations[i].End)
	}
	return s
}

// Kernels counts GPU activities of kind Kernel.
func (t *Trace) Kernels() int {
	n := 0
	for i := range t.GPU {
		if t.GPU[i].Kind == Kernel {
			n++
		}
	}
	return n
}

// LaunchOp returns the cpu op that launched GPU activity g: the launching
// API call's innermost enclosing op, else the op with the same External id.
// It returns None when the trace cannot say.
func (t *Trace) LaunchOp(g Index) Index {
	a := &t.GPU[g]
	if a.Launch != None {
		return t.APICalls[a.Launch].Op
	}
	return None
}

// LaunchFrame returns the innermost Python frame around GPU activity g's
// launch, or None.
func (t *Trace) LaunchFrame(g Index) Index {
	a := &t.GPU[g]
	if a.Launch != None {
		return t.APICalls[a.Launch].Frame
	}
	return None
}

// OpPath returns the chain of ops from the outermost down to op i.
func (t *Trace) OpPath(i Index) []Index {
	var path []Index
	for ; i != None; i = t.Ops[i].Parent {
		path = append(path, i)
	}
	for l, r := 0, len(path)-1; l < r; l, r = l+1, r-1 {
		path[l], path[r] = path[r], path[l]
	}
	return path
}

// FrameStack returns the Python frames from frame i outwards (innermost
// first).
func (t *Trace) FrameStack(i Index) []Index {
	var stack []Index
	for n := 0; i != None && n < 1<<16; n++ {
		stack = append(stack, i)
		i = t.Frames[i].Parent
	}
	return stack
}

// StepOf returns the index of the step whose interval contains time at, or
// -1 when none does.
func (t *Trace) StepOf(at Time) int {
	lo, hi := 0, len(t.Steps)
	for lo < hi {
		m := (lo + hi) / 2
		if t.Steps[m].End <= at {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(t.Steps) && t.Steps[lo].Start <= at {
		return lo
	}
	return -1
}

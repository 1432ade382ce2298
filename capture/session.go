package capture

import (
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// Trace layout: like Kineto, the host thread's events sit on pid/tid of the
// process and GPU records on pid = device ordinal, tid = stream. All work goes
// to the legacy default stream, which CUPTI reports as stream 7.
const (
	traceStream = 7
	traceCtx    = 1
)

// CUPTI callback ids Kineto writes as args.cbid of driver calls.
const (
	cbidLaunchKernel     = 307
	cbidMemcpyHtoD       = 25
	cbidEventSynchronize = 17
)

// OpStat is one resolved GPU operation, for the summary.
type OpStat struct {
	Name  string
	Cat   string // "kernel" or "gpu_memcpy"
	Step  int
	DurNs int64
	Bytes int64
}

// StepStat is what one recorded step measured.
type StepStat struct {
	Step int
	// HostNs is the host time to issue the step's work; WallNs adds the
	// wait for the GPU at its end (the ProfilerStep annotation).
	HostNs int64
	WallNs int64
	// GPUNs is the GPU time from the step's first to its last work, from
	// the two whole-step events.
	GPUNs int64
	// Launches counts kernel launches, library calls and copies issued.
	Launches int
	// LaunchCallNs is the host time spent inside the launch/copy calls.
	LaunchCallNs int64
	// LaunchCallMedianNs is the median host time of one launch/copy call.
	// Unlike the mean (LaunchCallNs over Launches) it is not moved by the
	// rare call that stalls (a page fault, CUPTI taking a buffer), so two
	// timing modes are compared on it.
	LaunchCallMedianNs int64
	// CalibrationErrNs bounds the host/GPU clock alignment error.
	CalibrationErrNs int64
}

type annotation struct {
	name     string
	cat      string // "user_annotation" or "cpu_op"
	ext      int64
	start    int64
	gpuStart int64
	gpuEnd   int64
	hasGPU   bool
	// parent is the enclosing annotation's index, -1 at the top.
	parent int
}

// widen extends the annotation's GPU span over [start, end].
func (a *annotation) widen(start, end int64) {
	if !a.hasGPU || start < a.gpuStart {
		a.gpuStart = start
	}
	if !a.hasGPU || end > a.gpuEnd {
		a.gpuEnd = end
	}
	a.hasGPU = true
}

type pendingOp struct {
	cat        string // "kernel" or "gpu_memcpy"
	name       string
	corr, ext  int64
	start, end EventID
	args       []Arg // kernel- or copy-specific args, after the common ones
	bytes      int64
	open       []int // indexes of enclosing annotations
}

// Session is one capture: it issues the workload's GPU work through a Driver
// and records the trace events. Workloads call its methods, never the Driver
// directly, between steps too, so that every allocation is freed on error.
type Session struct {
	d       Driver
	clk     Clock
	opt     Options
	dev     DeviceInfo
	pool    eventPool
	hostPid int
	hostTid int

	recording bool
	// measuring times launch calls of unrecorded steps (measureCUPTICost).
	measuring bool
	step      int
	cal       Calibration
	events    []TraceEvent
	nextCorr  int64
	nextExt   int64
	anns      []annotation
	open      []int
	pend      []pendingOp
	cur       StepStat
	// callNs holds the host time of each launch/copy call of the current
	// step, for StepStat.LaunchCallMedianNs.
	callNs []int64

	// CUPTI mode (src != nil): the step's host calls, where its GPU work
	// ran, and the streams seen.
	src      ActivitySource
	calls    []hostCall
	gpuFirst int64
	gpuLast  int64
	streams  map[streamKey]bool
	// gpuStream is the stream the step's GPU records ran on.
	gpuStream int
	// cuptiSteps wait for their records until the last step is done.
	cuptiSteps []cuptiStep

	kernels    map[string]*Kernel
	allocs     map[DevicePtr]int64
	hostAllocs [][]byte

	// Results.
	Steps []StepStat
	Ops   []OpStat
	// TimingOverheadNs is the host time spent recording per-launch events,
	// summed over TimedLaunches launches.
	TimingOverheadNs int64
	TimedLaunches    int64
	// Notes are workload-specific result lines for the summary.
	Notes []string
	// Activity holds the CUPTI buffers of the recorded steps when
	// Options.KeepActivity is set, and the steps' windows in CUPTI's
	// clock.
	Activity      []ActivityBuffer
	ActivitySteps []ActivityStep
	// CUPTICost is CUPTI's measured host cost per launch when
	// Options.CUPTICostRounds asked for it, else nil.
	CUPTICost *CUPTICost
}

func newSession(d Driver, src ActivitySource, clk Clock, opt Options, pid int) *Session {
	return &Session{
		d: d, src: src, clk: clk, opt: opt, dev: d.Device(), streams: map[streamKey]bool{},
		pool:    eventPool{d: d},
		hostPid: pid, hostTid: pid,
		nextCorr: 1, nextExt: 1,
		kernels: map[string]*Kernel{},
		allocs:  map[DevicePtr]int64{},
	}
}

// Device describes the GPU.
func (s *Session) Device() DeviceInfo { return s.dev }

// Kernel returns the named kernel of the embedded module.
func (s *Session) Kernel(name string) (*Kernel, error) {
	if k, ok := s.kernels[name]; ok {
		return k, nil
	}
	k, err := s.d.Kernel(name)
	if err != nil {
		return nil, fmt.Errorf("load kernel %s: %w", name, err)
	}
	s.kernels[name] = k
	return k, nil
}

// Alloc allocates device memory that the session frees at the end.
func (s *Session) Alloc(bytes int64) (DevicePtr, error) {
	p, err := s.d.Alloc(bytes)
	if err != nil {
		return 0, fmt.Errorf("allocate %d bytes on the device: %w", bytes, err)
	}
	s.allocs[p] = bytes
	return p, nil
}

// AllocFloats allocates n float32 on the device.
func (s *Session) AllocFloats(n int) (DevicePtr, error) { return s.Alloc(int64(n) * 4) }

// AllocHost allocates pinned host memory that the session frees at the end.
func (s *Session) AllocHost(bytes int64) ([]byte, error) {
	b, err := s.d.AllocHost(bytes)
	if err != nil {
		return nil, fmt.Errorf("allocate %d bytes of pinned host memory: %w", bytes, err)
	}
	s.hostAllocs = append(s.hostAllocs, b)
	return b, nil
}

// release frees everything the session allocated and destroys its events.
func (s *Session) release() error {
	var errs []error
	for p := range s.allocs {
		if err := s.d.Free(p); err != nil {
			errs = append(errs, fmt.Errorf("free device memory: %w", err))
		}
	}
	s.allocs = map[DevicePtr]int64{}
	for _, b := range s.hostAllocs {
		if err := s.d.FreeHost(b); err != nil {
			errs = append(errs, fmt.Errorf("free pinned memory: %w", err))
		}
	}
	s.hostAllocs = nil
	if err := s.pool.release(); err != nil {
		errs = append(errs, fmt.Errorf("destroy events: %w", err))
	}
	return errors.Join(errs...)
}

// floatBytes views a float32 slice as bytes (no copy).
func floatBytes(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), len(f)*4)
}

// Upload copies floats to the device, untraced (setup and checks).
func (s *Session) Upload(dst DevicePtr, src []float32) error {
	if err := s.d.CopyHtoD(dst, floatBytes(src)); err != nil {
		return fmt.Errorf("upload %d floats: %w", len(src), err)
	}
	return nil
}

// Download copies floats from the device, untraced.
func (s *Session) Download(dst []float32, src DevicePtr) error {
	if err := s.d.Synchronize(); err != nil {
		return fmt.Errorf("download: %w", err)
	}
	if err := s.d.CopyDtoH(floatBytes(dst), src); err != nil {
		return fmt.Errorf("download %d floats: %w", len(dst), err)
	}
	return nil
}

// Sync waits for the GPU, untraced.
func (s *Session) Sync() error { return s.d.Synchronize() }

// hostEvent appends a complete host-side event.
func (s *Session) hostEvent(cat, name string, ts, dur int64, args []Arg) {
	s.events = append(s.events, TraceEvent{Ph: "X", Cat: cat, Name: name, Pid: s.hostPid, Tid: s.hostTid, TsNs: ts, DurNs: dur, Args: args})
}

// region runs fn inside a host annotation of the given category.
func (s *Session) region(cat, name string, fn func() error) error {
	if !s.recording {
		return fn()
	}
	i := len(s.anns)
	s.anns = append(s.anns, annotation{name: name, cat: cat, ext: s.nextExt, start: s.clk.Now(), parent: s.inner()})
	s.nextExt++
	s.open = append(s.open, i)
	err := fn()
	s.open = s.open[:len(s.open)-1]
	a := &s.anns[i]
	s.hostEvent(cat, name, a.start, s.clk.Now()-a.start, []Arg{{"External id", a.ext}})
	return err
}

// Annotate runs fn inside a named user annotation (record_function).
func (s *Session) Annotate(name string, fn func() error) error {
	return s.region("user_annotation", name, fn)
}

// Op runs fn as a host-level operator (a cpu_op, like aten::addmm).
func (s *Session) Op(name string, fn func() error) error { return s.region("cpu_op", name, fn) }

// inner is the index of the innermost open annotation, -1 if none.
func (s *Session) inner() int {
	if n := len(s.open); n > 0 {
		return s.open[n-1]
	}
	return -1
}

// currentExt is the External id of the innermost open region, 0 if none.
func (s *Session) currentExt() int64 {
	if n := len(s.open); n > 0 {
		return s.anns[s.open[n-1]].ext
	}
	return 0
}

// timed issues one GPU operation (call) and records it: the host call as a
// cuda_driver event and, with per-launch timing, the GPU side between two
// events as a pending record resolved at the end of the step.
// libArgs are a library call's args, which CUPTI mode adds to the library's
// own kernels.
func (s *Session) timed(hostName string, cbid int, cat, gpuName string, bytes int64, gpuArgs, libArgs []Arg, call func() error) error {
	if !s.recording {
		if s.measuring {
			_, _, err := s.issue(call)
			return err
		}
		return call()
	}
	if s.src != nil {
		// CUPTI records the call and its GPU work; only the host bracket
		// is kept, to find the call's records and annotations later.
		t0, t1, err := s.issue(call)
		if err != nil {
			return err
		}
		s.calls = append(s.calls, hostCall{name: hostName, start: t0, end: t1, ext: s.currentExt(), inner: s.inner(), args: libArgs})
		return nil
	}
	corr := s.nextCorr
	s.nextCorr++
	ext := s.currentExt()
	var start, end EventID
	if s.opt.PerLaunchTiming {
		var err error
		if start, err = s.pool.get(); err != nil {
			return err
		}
		if end, err = s.pool.get(); err != nil {
			return err
		}
		t := s.clk.Now()
		if err := s.d.Record(start); err != nil {
			return fmt.Errorf("record start event of %s: %w", gpuName, err)
		}
		s.TimingOverheadNs += s.clk.Now() - t
	}
	t0, t1, err := s.issue(call)
	if err != nil {
		return err
	}
	s.hostEvent("cuda_driver", hostName, t0, t1-t0, []Arg{{"External id", ext}, {"cbid", cbid}, {"correlation", corr}})
	s.events = append(s.events, TraceEvent{Ph: "s", Cat: "ac2g", Name: "ac2g", Pid: s.hostPid, Tid: s.hostTid, TsNs: t0, ID: corr})
	if s.opt.PerLaunchTiming {
		t := s.clk.Now()
		if err := s.d.Record(end); err != nil {
			return fmt.Errorf("record end event of %s: %w", gpuName, err)
		}
		s.TimingOverheadNs += s.clk.Now() - t
		s.TimedLaunches++
		s.pend = append(s.pend, pendingOp{cat: cat, name: gpuName, corr: corr, ext: ext, start: start, end: end,
			args: gpuArgs, bytes: bytes, open: append([]int(nil), s.open...)})
	}
	return nil
}

// issue makes one launch or copy call, counts it in the step's stats and
// returns the host clock before and after it.
func (s *Session) issue(call func() error) (t0, t1 int64, err error) {
	t0 = s.clk.Now()
	err = call()
	t1 = s.clk.Now()
	if err == nil {
		s.cur.Launches++
		s.cur.LaunchCallNs += t1 - t0
		s.callNs = append(s.callNs, t1-t0)
	}
	return t0, t1, err
}

// openCallStats starts a step's per-call host times.
func (s *Session) openCallStats() { s.callNs = s.callNs[:0] }

// closeCallStats files the step's median call time; it sorts, so it runs
// after the step's host and wall clocks are read.
func (s *Session) closeCallStats() {
	s.cur.LaunchCallMedianNs = medianI64(s.callNs)
	s.callNs = s.callNs[:0]
}

// Launch launches a kernel (cuLaunchKernel), recorded like CUPTI records it.
func (s *Session) Launch(k *Kernel, grid, block Dim3, sharedBytes int, args ...any) error {
	call := func() error {
		if err := s.d.Launch(k, grid, block, sharedBytes, args...); err != nil {
			return fmt.Errorf("launch %s: %w", k.Name, err)
		}
		return nil
	}
	if !s.recording || s.src != nil {
		return s.timed("cuLaunchKernel", cbidLaunchKernel, "kernel", k.Name, 0, nil, nil, call)
	}
	sms := float64(max(s.dev.NumSms, 1))
	blocks := float64(grid.count())
	warps := blocks * math.Ceil(float64(block.count())/float64(max(s.dev.WarpSize, 1)))
	gpuArgs := []Arg{
		{"registers per thread", k.Registers},
		{"shared memory", k.StaticShared + sharedBytes},
		{"blocks per SM", blocks / sms},
		{"warps per SM", warps / sms},
		{"grid", []int{grid.X, grid.Y, grid.Z}},
		{"block", []int{block.X, block.Y, block.Z}},
	}
	return s.timed("cuLaunchKernel", cbidLaunchKernel, "kernel", k.Name, 0, gpuArgs, nil, call)
}

// LibrarySgemm runs the library GEMM (see Driver.LibrarySgemm). Without
// CUPTI the library's own kernels are invisible, so the GPU record is named
// after the call and spans every kernel it launched.
func (s *Session) LibrarySgemm(transA, transB bool, m, n, k int, a DevicePtr, lda int, b DevicePtr, ldb int, c DevicePtr, ldc int) error {
	call := func() error {
		if err := s.d.LibrarySgemm(transA, transB, m, n, k, a, lda, b, ldb, c, ldc); err != nil {
			return fmt.Errorf("library sgemm %dx%dx%d: %w", m, n, k, err)
		}
		return nil
	}
	lib := []Arg{{"library", s.d.LibraryName()}, {"m", m}, {"n", n}, {"k", k}}
	return s.timed("cublasSgemm_v2", cbidLaunchKernel, "kernel", "cublasSgemm_v2", 0, lib, lib, call)
}

// CopyHtoD copies host memory to the device (cuMemcpyHtoD), recorded as a
// gpu_memcpy. pinned says whether src came from AllocHost.
func (s *Session) CopyHtoD(dst DevicePtr, src []byte, pinned bool) error {
	kind := "Pageable"
	if pinned {
		kind = "Pinned"
	}
	call := func() error {
		if err := s.d.CopyHtoD(dst, src); err != nil {
			return fmt.Errorf("copy %d bytes host to device (%s): %w", len(src), kind, err)
		}
		return nil
	}
	return s.timed("cuMemcpyHtoD_v2", cbidMemcpyHtoD, "gpu_memcpy", "Memcpy HtoD ("+kind+" -> Device)", int64(len(src)), nil, nil, call)
}

package capture

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// ActivitySource is CUPTI's Activity API as capture uses it: kernel, memcpy,
// memset, driver and runtime API records with GPU timestamps and
// correlation ids, delivered in buffers. The real one (OpenCUPTI) needs the
// build tag "cuda" and finds libcupti at run time; tests use a fake.
type ActivitySource interface {
	// Timestamp is CUPTI's current timestamp (the clock of its records).
	Timestamp() (int64, error)
	// Flush hands over every buffer of records completed so far; after a
	// context synchronize that is every record of the work issued.
	Flush() ([]ActivityBuffer, error)
	// Dropped is how many records CUPTI dropped for want of buffers.
	Dropped() (int64, error)
	// Library names the CUPTI library and its API version.
	Library() string
	// APIRecords says which driver and runtime API calls are recorded.
	APIRecords() string
	// Kinds names the record kinds enabled (CUPTIConfig).
	Kinds() []string
	// Pause switches every record kind off, so that work issued until
	// Resume is not recorded (for CUPTICost); Resume switches them on again.
	// Both may be called in any state.
	Pause() error
	Resume() error
	// Close stops recording.
	Close() error
}

// Timing modes, as the trace's metadata names them.
const (
	// TimingCUPTI: CUPTI activity records for every kernel, copy and API
	// call.
	TimingCUPTI = "cupti"
	// TimingEvents: two CUDA events around each launch.
	TimingEvents = "events"
	// TimingSteps: two CUDA events around each step, nothing per launch.
	TimingSteps = "steps"
)

// CUPTIConfig selects CUPTI's records: kernels and the driver API always,
// copies, sets and the runtime API where the workload issues them.
type CUPTIConfig struct {
	// AllAPI records every driver and runtime API call (as Kineto does).
	// Off, only the calls wantedAPI names are recorded, where CUPTI can
	// switch records per function (12.5 and newer): each record costs
	// host time inside the call, and the trace needs only the launches,
	// copies, sets and waits.
	AllAPI bool
	// Copies records memcpy and memset activity: the workload copies
	// inside its steps (Workload.Copies).
	Copies bool
	// Library records the runtime API and copies and sets too: the
	// workload calls a library (cuBLAS), which works through the runtime
	// and may copy or set memory itself (Workload.Library).
	Library bool
}

// ForWorkload is the configuration that records everything w issues in its
// steps and nothing more: every record kind enabled costs host time in
// every launch, whether it records anything or not.
func ForWorkload(w Workload, allAPI bool) CUPTIConfig {
	return CUPTIConfig{AllAPI: allAPI, Copies: w.Copies, Library: w.Library}
}

// Record kinds, the bits of kindMask in the order of cupti_cuda.go's
// tl_all_kinds.
const (
	kindConcurrentKernel = 1 << iota
	kindDriver
	kindMemcpy
	kindMemset
	kindRuntime
)

// kindMask is the set of record kinds the configuration enables.
func (c CUPTIConfig) kindMask() uint {
	m := uint(kindConcurrentKernel | kindDriver)
	if c.Copies || c.Library {
		m |= kindMemcpy | kindMemset
	}
	if c.Library || c.AllAPI {
		m |= kindRuntime
	}
	return m
}

// kindNames names the enabled record kinds, as the trace's metadata lists
// them.
func (c CUPTIConfig) kindNames() []string {
	m := c.kindMask()
	var n []string
	for i, name := range []string{"concurrent kernel", "driver API", "memcpy", "memset", "runtime API"} {
		if m&(1<<i) != 0 {
			n = append(n, name)
		}
	}
	return n
}

// What APIRecords says, before any detail.
const (
	apiRecordsAll   = "every driver and runtime API call"
	apiRecordsCalls = "launch, copy, set and synchronize calls only"
)

// wantedAPI reports whether the records of the driver or runtime API
// function name are kept when CUPTIConfig.AllAPI is off: the calls that
// issue GPU work (their records carry the correlation id that links a
// kernel, copy or set to its call) and the waits for the GPU (the host
// time a step blocks). The names are CUPTI's (cuptiGetCallbackName), which
// carry version suffixes such as _v2, _ptsz, _v7000.
func wantedAPI(name string) bool {
	for _, p := range []string{"cuLaunch", "cuMemcpy", "cuMemset", "cuGraphLaunch",
		"cudaLaunch", "cudaMemcpy", "cudaMemset", "cudaGraphLaunch"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	// cuCtxSynchronize, cuStreamSynchronize, cuEventSynchronize,
	// cudaDeviceSynchronize, ...
	return strings.HasPrefix(name, "cu") && strings.Contains(name, "Synchronize")
}

// ErrNoCUPTI is returned by OpenCUPTI in a build without the "cuda" tag.
var ErrNoCUPTI = errors.New("this tracelens was built without CUDA support, so it cannot load CUPTI")

// cuptiCalibration maps CUPTI's clock to the host clock: host = cupti +
// Offset, known within ±Error. Both are CPU clocks read back to back, so the
// bracket is tight (tens of ns).
type cuptiCalibration struct{ Offset, Error int64 }

func calibrateCUPTI(src ActivitySource, clk Clock) (cuptiCalibration, error) {
	best := cuptiCalibration{Error: -1}
	for i := 0; i < calibrateTries; i++ {
		h0 := clk.Now()
		c, err := src.Timestamp()
		if err != nil {
			return cuptiCalibration{}, fmt.Errorf("calibrate CUPTI clock: %w", err)
		}
		h1 := clk.Now()
		cal := cuptiCalibration{Offset: h0 + (h1-h0)/2 - c, Error: (h1 - h0 + 1) / 2}
		if best.Error < 0 || cal.Error < best.Error {
			best = cal
		}
	}
	return best, nil
}

// hostCall is one launch or copy the session issued in CUPTI mode: the host
// clock before and after the call, and where it sits in the annotations.
// CUPTI's API records of the call fall inside [start, end]; the GPU records
// they issued carry the same correlation id.
type hostCall struct {
	name       string // the API function, e.g. cuLaunchKernel
	start, end int64
	ext        int64
	inner      int   // innermost open annotation, -1 if none
	args       []Arg // library call's args, added to its kernels
}

// drainActivities flushes CUPTI and decodes every buffer.
func drainActivities(src ActivitySource) ([]Activity, []ActivityBuffer, error) {
	bufs, err := src.Flush()
	if err != nil {
		return nil, nil, fmt.Errorf("flush CUPTI records: %w", err)
	}
	var acts []Activity
	for i := range bufs {
		a, err := DecodeActivities(&bufs[i], i)
		if err != nil {
			return nil, nil, err
		}
		acts = append(acts, a...)
	}
	if n, err := src.Dropped(); err != nil {
		return nil, nil, fmt.Errorf("CUPTI dropped records: %w", err)
	} else if n > 0 {
		return nil, nil, fmt.Errorf("CUPTI dropped %d activity records (buffers too small or too few)", n)
	}
	return acts, bufs, nil
}

// findCall returns the index of the host call whose bracket holds t, or -1.
// calls are in issue order, so their brackets are sorted and disjoint.
func findCall(calls []hostCall, t int64) int {
	i := sort.Search(len(calls), func(i int) bool { return calls[i].end >= t })
	if i < len(calls) && calls[i].start <= t {
		return i
	}
	return -1
}

// convertActivities turns one step's CUPTI records into trace events: API
// records inside [from, to] (host clock) become cuda_driver/cuda_runtime
// events, GPU records whose API call is among them become kernel, gpu_memcpy
// and gpu_memset events linked by flow events, and each GPU record widens
// the GPU span of the annotations around its host call. stepExt is the
// External id of API calls outside every host call (the step's own sync).
//
// It returns the index of the first host call that no GPU record belongs
// to, or -1, and how many such calls there are: every launch, copy and library call issues GPU work, so a call
// without any means CUPTI did not record it (a record kind that was not
// enabled, or records lost), and the step's GPU time would be short.
func (s *Session) convertActivities(acts []Activity, cal cuptiCalibration, from, to, stepExt int64) (first, missing int) {
	s.gpuStream = traceStream
	apis := s.convertAPIRecords(acts, cal, from, to, stepExt)
	linked := map[uint32]bool{}
	callGPU := make([]bool, len(s.calls))
	for i := range acts {
		a := &acts[i]
		if !a.GPU() {
			continue
		}
		api, ok := apis[a.Correlation]
		if !ok {
			continue // issued outside the step (setup, warm-up)
		}
		if !linked[a.Correlation] {
			// One flow per API call, at its start, as Kineto writes it.
			linked[a.Correlation] = true
			s.events = append(s.events, TraceEvent{Ph: "s", Cat: "ac2g", Name: "ac2g", Pid: s.hostPid, Tid: s.hostTid, TsNs: api.ts, ID: int64(a.Correlation)})
		}
		if api.call >= 0 {
			callGPU[api.call] = true
		}
		s.convertGPURecord(a, api, a.Start+cal.Offset)
	}
	return firstMissing(callGPU)
}

// apiRecord is where a CUPTI API record of the step belongs: the host
// call it falls in (-1: none), its External id and its start on the host
// clock. The GPU records it issued share its correlation id.
type apiRecord struct {
	call    int
	ext, ts int64
}

// convertAPIRecords writes the API records inside [from, to] (host clock)
// as cuda_driver/cuda_runtime events and returns them by correlation id,
// for the GPU records to find their call.
func (s *Session) convertAPIRecords(acts []Activity, cal cuptiCalibration, from, to, stepExt int64) map[uint32]apiRecord {
	apis := map[uint32]apiRecord{}
	for i := range acts {
		a := &acts[i]
		if a.GPU() {
			continue
		}
		ts := a.Start + cal.Offset
		if ts < from || ts > to {
			continue
		}
		mid := ts + (a.End-a.Start)/2
		c := findCall(s.calls, mid)
		ext := stepExt
		if c >= 0 {
			ext = s.calls[c].ext
		}
		apis[a.Correlation] = apiRecord{call: c, ext: ext, ts: ts}
		cat := "cuda_driver"
		if a.Kind == ActRuntime {
			cat = "cuda_runtime"
		}
		s.hostEvent(cat, a.Name, ts, a.End-a.Start, []Arg{{"External id", ext}, {"cbid", int(a.CBID)}, {"correlation", int64(a.Correlation)}})
	}
	return apis
}

// convertGPURecord writes one GPU record issued by api, starting at ts on
// the host clock, as a kernel/memcpy/memset event with its flow's end,
// widens the annotations around its host call by it, and counts it in the
// session's GPU span, op stats and streams.
func (s *Session) convertGPURecord(a *Activity, api apiRecord, ts int64) {
	dur := a.End - a.Start
	s.events = append(s.events,
		TraceEvent{Ph: "X", Cat: a.gpuCat(), Name: a.gpuName(), Pid: int(a.Device), Tid: int(a.Stream), TsNs: ts, DurNs: dur, Args: s.gpuArgs(a, api)},
		TraceEvent{Ph: "f", Cat: "ac2g", Name: "ac2g", Pid: int(a.Device), Tid: int(a.Stream), TsNs: ts, ID: int64(a.Correlation)})
	if api.call >= 0 {
		for j := s.calls[api.call].inner; j >= 0; j = s.anns[j].parent {
			s.anns[j].widen(ts, ts+dur)
		}
	}
	if s.gpuFirst == 0 || ts < s.gpuFirst {
		s.gpuFirst = ts
	}
	s.gpuLast = max(s.gpuLast, ts+dur)
	bytes := int64(0)
	if a.Kind != ActKernel && a.Kind != ActConcurrentKernel {
		bytes = a.Bytes
	}
	s.Ops = append(s.Ops, OpStat{Name: a.gpuName(), Cat: a.gpuCat(), Step: s.step, DurNs: dur, Bytes: bytes})
	s.streams[streamKey{int(a.Device), int(a.Stream)}] = true
	s.gpuStream = int(a.Stream)
}

// gpuArgs are a GPU record's args as Kineto writes them: its ids and
// stream, then bytes and bandwidth for a copy or set, or the launch
// attributes for a kernel, then the args of the library call that issued
// it.
func (s *Session) gpuArgs(a *Activity, api apiRecord) []Arg {
	args := []Arg{{"External id", api.ext}, {"queued", 0}, {"device", int(a.Device)}, {"context", int(a.Context)},
		{"stream", int(a.Stream)}, {"correlation", int64(a.Correlation)}}
	switch a.Kind {
	case ActMemcpy, ActMemset:
		gbps := 0.0
		if dur := a.End - a.Start; dur > 0 {
			gbps = float64(a.Bytes) / float64(dur) // bytes/ns = GB/s
		}
		args = append(args, Arg{"bytes", a.Bytes}, Arg{"memory bandwidth (GB/s)", gbps})
	default:
		args = append(args, s.kernelArgs(a)...)
	}
	if api.call >= 0 {
		args = append(args, s.calls[api.call].args...)
	}
	return args
}

// firstMissing is the index of the first host call no GPU record belongs
// to (-1: none) and how many such calls there are.
func firstMissing(callGPU []bool) (first, missing int) {
	first = -1
	for i, ok := range callGPU {
		if !ok {
			if first < 0 {
				first = i
			}
			missing++
		}
	}
	return first, missing
}

// kernelArgs are the launch attributes Kineto writes for a kernel record.
func (s *Session) kernelArgs(a *Activity) []Arg {
	sms := float64(max(s.dev.NumSms, 1))
	blocks := float64(a.Grid[0]) * float64(a.Grid[1]) * float64(a.Grid[2])
	threads := float64(a.Block[0]) * float64(a.Block[1]) * float64(a.Block[2])
	warp := float64(max(s.dev.WarpSize, 1))
	warps := blocks * math.Ceil(threads/warp)
	return []Arg{
		{"registers per thread", a.Registers},
		{"shared memory", int(a.StaticShared + a.DynamicShared)},
		{"blocks per SM", blocks / sms},
		{"warps per SM", warps / sms},
		{"grid", []int{int(a.Grid[0]), int(a.Grid[1]), int(a.Grid[2])}},
		{"block", []int{int(a.Block[0]), int(a.Block[1]), int(a.Block[2])}},
	}
}

// streamKey names a GPU stream of the trace.
type streamKey struct{ dev, stream int }

// cuptiStep is what a recorded step leaves for the conversion of its
// records after the last step: CUPTI is flushed once, at the end, because a
// flush makes CUPTI ask for new buffers at its next record (0.4-0.8 ms on
// the H100), which would widen the gaps between steps.
type cuptiStep struct {
	n        int
	cal      cuptiCalibration
	from, to int64 // host window
	ext      int64
	calls    []hostCall
	anns     []annotation
	stat     StepStat
}

// primeCUPTI drops the records of earlier work (setup, warm-up, the check)
// and has CUPTI ask for its buffers outside the steps: it flushes, then
// launches an empty kernel and waits for it.
func (s *Session) primeCUPTI(prime *Kernel) error {
	if err := s.d.Synchronize(); err != nil {
		return fmt.Errorf("wait for work before the steps: %w", err)
	}
	if _, _, err := drainActivities(s.src); err != nil {
		return err
	}
	if prime != nil {
		if err := s.d.Launch(prime, Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, uint64(0)); err != nil {
			return fmt.Errorf("launch %s: %w", prime.Name, err)
		}
		if err := s.d.Synchronize(); err != nil {
			return fmt.Errorf("wait for %s: %w", prime.Name, err)
		}
	}
	return nil
}

// runStepCUPTI runs one recorded step in CUPTI mode: align CUPTI's clock
// with the host's, open ProfilerStep#n, run fn and wait for the GPU. The
// step's records are converted by finishCUPTI.
func (s *Session) runStepCUPTI(n int, fn func() error) error {
	cal, err := calibrateCUPTI(s.src, s.clk)
	if err != nil {
		return err
	}
	s.beginStep(n, cal.Error)
	s.calls = nil
	defer func() { s.recording = false }()
	name := fmt.Sprintf("ProfilerStep#%d", n)
	hStart := s.clk.Now()
	_, stepExt, err := s.stepRange(name, hStart, fn)
	if err != nil {
		return err
	}
	hEnd := s.clk.Now()
	// Like a training loop that reads its loss, the step ends only after
	// waiting for the GPU; CUPTI records the wait (cuCtxSynchronize).
	if err := s.d.Synchronize(); err != nil {
		return fmt.Errorf("wait for step end: %w", err)
	}
	hDone := s.clk.Now()
	s.hostEvent("user_annotation", name, hStart, hDone-hStart, []Arg{{"External id", stepExt}})
	s.cur.HostNs = hEnd - hStart
	s.cur.WallNs = hDone - hStart
	s.closeCallStats()
	s.cuptiSteps = append(s.cuptiSteps, cuptiStep{n: n, cal: cal, from: hStart, to: hDone, ext: stepExt,
		calls: s.calls, anns: append([]annotation(nil), s.anns...), stat: s.cur})
	s.anns = s.anns[:0]
	return nil
}

// finishCUPTI flushes CUPTI once and converts every recorded step's
// records.
func (s *Session) finishCUPTI() error {
	acts, bufs, err := drainActivities(s.src)
	if err != nil {
		return err
	}
	if s.opt.KeepActivity {
		s.Activity = append(s.Activity, bufs...)
	}
	for _, st := range s.cuptiSteps {
		s.step, s.calls, s.anns, s.cur = st.n, st.calls, st.anns, st.stat
		s.gpuFirst, s.gpuLast = 0, 0
		if i, missing := s.convertActivities(acts, st.cal, st.from, st.to, st.ext); i >= 0 {
			return fmt.Errorf("ProfilerStep#%d: CUPTI recorded no GPU work for %d of its %d calls (the first: call %d, %s): "+
				"a record kind it needs was not enabled (recorded: %s), or records were lost", st.n, missing, len(st.calls), i+1,
				st.calls[i].name, strings.Join(s.src.Kinds(), ", "))
		}
		if s.gpuLast > s.gpuFirst {
			s.cur.GPUNs = s.gpuLast - s.gpuFirst
		}
		s.endStep(s.dev.ID, s.gpuStream)
		if s.opt.KeepActivity {
			s.ActivitySteps = append(s.ActivitySteps, ActivityStep{From: st.from - st.cal.Offset, To: st.to - st.cal.Offset, Offset: st.cal.Offset})
		}
	}
	s.cuptiSteps, s.calls = nil, nil
	return nil
}

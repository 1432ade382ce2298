package capture

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strings"
)

// Options control one capture.
type Options struct {
	// Workload is a name from Workloads().
	Workload string
	// Size overrides the workload's DefaultSize when not empty.
	Size string
	// Steps is how many ProfilerStep#N are recorded; Warmup steps run
	// before them unrecorded (module JIT, library handles, caches).
	Steps, Warmup int
	// Check verifies the workload's output against a CPU reference at its
	// CheckSize before the capture.
	Check bool
	// PerLaunchTiming brackets every launch and copy with two events; off,
	// only whole steps are timed on the GPU.
	PerLaunchTiming bool
	// LeadNs is how long the GPU is held at the start of each step so the
	// host gets ahead of it (per-launch timing only); 0 disables it.
	LeadNs int64
	// Pid is the host process id written as the CPU events' pid and tid.
	Pid int
	// KeepActivity keeps the recorded steps' CUPTI buffers in the
	// session (for --dump-activity).
	KeepActivity bool
	// CUPTICostRounds, in CUPTI mode, measures CUPTI's host cost per
	// launch after the recorded steps: this many pairs of unrecorded steps
	// with CUPTI's records off and on (Session.CUPTICost). 0: not measured.
	CUPTICostRounds int
}

// DefaultOptions are the command's defaults.
func DefaultOptions(workload string) Options {
	return Options{Workload: workload, Steps: 5, Warmup: 2, PerLaunchTiming: true, LeadNs: 20_000}
}

// Result is a finished capture.
type Result struct {
	Workload Workload
	Size     string
	Trace    *Trace
	Session  *Session
	// Checked says whether --check ran (and passed: a failed check is an
	// error from Run).
	Checked bool
}

// Run opens nothing itself: it runs the workload on d, which the caller
// opened and closes (Close destroys the context, also after an error). With
// per-launch timing and a CUPTI source (src not nil), GPU work is timed by
// CUPTI's activity records; without one, by CUDA events around each launch.
// Every error names the workload and the phase or step it happened in.
func Run(d Driver, src ActivitySource, clk Clock, opt Options) (*Result, error) {
	if !opt.PerLaunchTiming {
		src = nil
	}
	w, ok := Lookup(opt.Workload)
	if !ok {
		return nil, fmt.Errorf("unknown workload %q (see --list)", opt.Workload)
	}
	if opt.Steps < 1 || opt.Warmup < 0 {
		return nil, fmt.Errorf("steps must be at least 1 and warm-up at least 0")
	}
	size := opt.Size
	if size == "" {
		size = w.DefaultSize
	}
	wl, err := w.make(size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", w.Name, err)
	}
	rng := rand.New(rand.NewPCG(uint64(clk.Now()), 0x7ace1e45))
	res := &Result{Workload: w, Size: size}
	if opt.Check {
		cw, err := w.make(w.CheckSize)
		if err != nil {
			return nil, fmt.Errorf("%s: check size: %w", w.Name, err)
		}
		cs := newSession(d, nil, clk, opt, opt.Pid)
		err = func() error {
			if err := cw.setup(cs, rng); err != nil {
				return fmt.Errorf("check setup: %w", err)
			}
			if err := cw.step(cs); err != nil {
				return fmt.Errorf("check step: %w", err)
			}
			if err := cw.verify(cs); err != nil {
				return fmt.Errorf("check at size %s: %w", w.CheckSize, err)
			}
			return nil
		}()
		if rerr := cs.release(); err == nil && rerr != nil {
			err = fmt.Errorf("check cleanup: %w", rerr)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", w.Name, err)
		}
		res.Checked = true
	}
	s := newSession(d, src, clk, opt, opt.Pid)
	err = runSteps(s, wl, rng, opt)
	if rerr := s.release(); rerr != nil {
		err = errors.Join(err, fmt.Errorf("cleanup: %w", rerr))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", w.Name, err)
	}
	res.Session = s
	res.Trace = s.trace(w, size)
	s.Notes = wl.notes(s)
	return res, nil
}

func runSteps(s *Session, wl workload, rng *rand.Rand, opt Options) error {
	if err := wl.setup(s, rng); err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	var lead *Kernel
	// The lead kernel holds the GPU at each step's start in event mode; in
	// CUPTI mode it primes CUPTI's buffers before the first step (see
	// primeCUPTI).
	if opt.PerLaunchTiming && (opt.LeadNs > 0 || s.src != nil) {
		var err error
		if lead, err = s.Kernel("capture_lead"); err != nil {
			return fmt.Errorf("setup: %w", err)
		}
	}
	for i := 0; i < opt.Warmup; i++ {
		if err := wl.step(s); err != nil {
			return fmt.Errorf("warm-up step %d: %w", i, err)
		}
	}
	if err := s.Sync(); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	if s.src != nil {
		if err := s.primeCUPTI(lead); err != nil {
			return fmt.Errorf("before ProfilerStep#%d: %w", opt.Warmup, err)
		}
	}
	for i := 0; i < opt.Steps; i++ {
		n := opt.Warmup + i
		if err := s.runStep(n, lead, func() error { return wl.step(s) }); err != nil {
			return fmt.Errorf("ProfilerStep#%d: %w", n, err)
		}
	}
	if s.src != nil {
		if err := s.finishCUPTI(); err != nil {
			return fmt.Errorf("CUPTI records: %w", err)
		}
		if opt.CUPTICostRounds > 0 {
			c, err := s.measureCUPTICost(func() error { return wl.step(s) }, lead, opt.CUPTICostRounds)
			if err != nil {
				return err
			}
			s.CUPTICost = c
		}
	}
	return nil
}

// trace assembles the recorded events with Kineto's metadata events.
func (s *Session) trace(w Workload, size string) *Trace {
	ev := make([]TraceEvent, 0, len(s.events)+8)
	var t0 int64
	if len(s.events) > 0 {
		t0 = s.events[0].TsNs
		for _, e := range s.events {
			t0 = min(t0, e.TsNs)
		}
	}
	meta := func(pid, tid int, name string, args []Arg) {
		ev = append(ev, TraceEvent{Ph: "M", Name: name, Pid: pid, Tid: tid, TsNs: t0, Args: args})
	}
	meta(s.hostPid, 0, "process_name", []Arg{{"name", "tracelens-capture"}})
	meta(s.hostPid, 0, "process_labels", []Arg{{"labels", "CPU"}})
	meta(s.hostPid, s.hostTid, "thread_name", []Arg{{"name", "thread " + fmt.Sprint(s.hostTid) + " (tracelens-capture)"}})
	meta(s.dev.ID, 0, "process_name", []Arg{{"name", "tracelens-capture"}})
	meta(s.dev.ID, 0, "process_labels", []Arg{{"labels", fmt.Sprintf("GPU %d", s.dev.ID)}})
	streams := make([]streamKey, 0, len(s.streams))
	for k := range s.streams {
		streams = append(streams, k)
	}
	if len(streams) == 0 {
		streams = append(streams, streamKey{s.dev.ID, traceStream})
	}
	sort.Slice(streams, func(i, j int) bool {
		return streams[i].dev < streams[j].dev || streams[i].dev == streams[j].dev && streams[i].stream < streams[j].stream
	})
	for _, k := range streams {
		meta(k.dev, k.stream, "thread_name", []Arg{{"name", fmt.Sprintf("stream %d ", k.stream)}})
	}
	body := append([]TraceEvent(nil), s.events...)
	sort.SliceStable(body, func(i, j int) bool {
		if body[i].TsNs != body[j].TsNs {
			return body[i].TsNs < body[j].TsNs
		}
		return body[i].DurNs > body[j].DurNs
	})
	ev = append(ev, body...)
	var calErr int64
	for _, st := range s.Steps {
		calErr = max(calErr, st.CalibrationErrNs)
	}
	overhead := int64(0)
	if s.TimedLaunches > 0 {
		overhead = s.TimingOverheadNs / s.TimedLaunches
	}
	info := []Arg{{"workload", w.Name}, {"size", size}, {"steps", len(s.Steps)}, {"per_launch_timing", s.opt.PerLaunchTiming},
		{"library", s.d.LibraryName()}, {"timing_mode", s.timingMode()}}
	switch s.timingMode() {
	case TimingCUPTI:
		info = append(info, Arg{"cupti_library", s.src.Library()}, Arg{"cupti_api_records", s.src.APIRecords()}, Arg{"clock_alignment_error_ns", calErr},
			Arg{"cupti_kinds", strings.Join(s.src.Kinds(), ", ")},
			Arg{"timing", "CUPTI activity records, CUPTI clock aligned to the host monotonic clock every step"})
		if c := s.CUPTICost; c != nil {
			info = append(info, Arg{"cupti_cost", []Arg{{"rounds", c.Rounds}, {"launches_per_step", c.Launches},
				{"launch_call_off_ns", c.CallOffNs}, {"launch_call_on_ns", c.CallOnNs},
				{"launch_call_added_ns", c.CallDiff.ints()},
				{"host_step_added_per_launch_ns", c.StepDiff.ints()},
				{"method", "unrecorded steps with CUPTI's records off and on in alternating order, paired per round; [Q1, median, Q3] over rounds"}}})
		}
	case TimingEvents:
		info = append(info, Arg{"clock_alignment_error_ns", calErr}, Arg{"timing_overhead_per_launch_ns", overhead},
			Arg{"timing", "CUDA events around each launch, event clock calibrated to the host monotonic clock every step"})
	default:
		info = append(info, Arg{"timing", "CUDA events around each step only: no per-launch records"})
	}
	extra := []Arg{{"trace_id", fmt.Sprintf("tracelens-capture-%s-%d", w.Name, t0)}, {"tracelens_capture", info}}
	return &Trace{Device: s.dev, Extra: extra, Events: ev}
}

// WriteSummary prints what the capture measured.
func (r *Result) WriteSummary(w io.Writer) error {
	s := r.Session
	var b strings.Builder
	fmt.Fprintf(&b, "%s (size %s) on %s: %d steps", r.Workload.Name, r.Size, s.dev.Name, len(s.Steps))
	if r.Checked {
		fmt.Fprintf(&b, ", check passed at size %s", r.Workload.CheckSize)
	}
	b.WriteString("\n")
	switch s.timingMode() {
	case TimingCUPTI:
		var calErr int64
		for _, st := range s.Steps {
			calErr = max(calErr, st.CalibrationErrNs)
		}
		fmt.Fprintf(&b, "timing: CUPTI activity records (%s; records: %s; API records: %s); clocks aligned within +-%s us\n",
			s.src.Library(), strings.Join(s.src.Kinds(), ", "), s.src.APIRecords(), us(calErr))
		if c := s.CUPTICost; c != nil {
			fmt.Fprintf(&b, "CUPTI's host cost per launch (%d rounds of unrecorded steps with records off and on, paired, %d launches a step): "+
				"inside the launch call %s us (IQR %s to %s; median call %s -> %s us), host step time %s us per launch (IQR %s to %s)\n",
				c.Rounds, c.Launches, signedUs(c.CallDiff.Median), signedUs(c.CallDiff.Q1), signedUs(c.CallDiff.Q3), us(c.CallOffNs), us(c.CallOnNs),
				signedUs(c.StepDiff.Median), signedUs(c.StepDiff.Q1), signedUs(c.StepDiff.Q3))
		}
	case TimingEvents:
		var calErr int64
		for _, st := range s.Steps {
			calErr = max(calErr, st.CalibrationErrNs)
		}
		over := int64(0)
		if s.TimedLaunches > 0 {
			over = s.TimingOverheadNs / s.TimedLaunches
		}
		fmt.Fprintf(&b, "timing: 2 events per launch, %s us host overhead per launch; clocks aligned within +-%s us\n", us(over), us(calErr))
	default:
		b.WriteString("timing: whole steps only (--no-per-launch-timing): no per-kernel records\n")
	}
	for _, n := range s.Notes {
		b.WriteString("  " + n + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// timingMode names how the session timed GPU work (TimingCUPTI,
// TimingEvents or TimingSteps).
func (s *Session) timingMode() string {
	switch {
	case !s.opt.PerLaunchTiming:
		return TimingSteps
	case s.src != nil:
		return TimingCUPTI
	}
	return TimingEvents
}

package capture

import "fmt"

// Steps: the event-timed step (runStep, resolve) and what every mode does at
// a step's end (endStep). CUPTI's step is in cupti.go.

// runStep runs one recorded step: calibrate the event clock, open
// ProfilerStep#n, run fn, then resolve every GPU record of the step.
func (s *Session) runStep(n int, lead *Kernel, fn func() error) error {
	if s.src != nil {
		return s.runStepCUPTI(n, fn)
	}
	cal, err := calibrate(s.d, s.clk, &s.pool)
	if err != nil {
		return err
	}
	s.cal = cal
	s.beginStep(n, cal.Error)
	defer func() { s.recording = false }()
	gStart, err := s.pool.get()
	if err != nil {
		return err
	}
	gEnd, err := s.pool.get()
	if err != nil {
		return err
	}
	name := fmt.Sprintf("ProfilerStep#%d", n)
	hStart := s.clk.Now()
	if err := s.leadIn(lead); err != nil {
		return err
	}
	if err := s.d.Record(gStart); err != nil {
		return fmt.Errorf("record step start event: %w", err)
	}
	stepAnn, stepExt, err := s.stepRange(name, hStart, fn)
	if err != nil {
		return err
	}
	if err := s.waitStep(name, stepExt, hStart, gEnd); err != nil {
		return err
	}
	if s.cur.GPUNs, err = s.d.ElapsedNs(gStart, gEnd); err != nil {
		return fmt.Errorf("step GPU time: %w", err)
	}
	if err := s.resolve(); err != nil {
		return err
	}
	// The step's GPU annotation: from its GPU records when timed per
	// launch (as Kineto derives it), else from the whole-step events.
	if !s.opt.PerLaunchTiming {
		ts, err := s.cal.hostTime(s.d, gStart)
		if err != nil {
			return err
		}
		s.anns[stepAnn].gpuStart, s.anns[stepAnn].gpuEnd, s.anns[stepAnn].hasGPU = ts, ts+s.cur.GPUNs, true
	}
	s.pool.put(gStart)
	s.pool.put(gEnd)
	s.pool.put(cal.Ref)
	s.endStep(s.dev.ID, traceStream)
	return nil
}

// beginStep starts recording step n in either mode: its stats (with the
// clock calibration's error) and per-call host times. The caller stops
// recording when the step returns.
func (s *Session) beginStep(n int, calErrNs int64) {
	s.step = n
	s.recording = true
	s.cur = StepStat{Step: n, CalibrationErrNs: calErrNs}
	s.openCallStats()
}

// leadIn keeps the GPU busy briefly (a lead kernel of LeadNs) when each
// launch is timed, so that the host queues the step's first launches
// before the GPU reaches them: otherwise a start event fires as soon as it
// is recorded, and the first kernel's time would include the launch
// latency.
func (s *Session) leadIn(lead *Kernel) error {
	if lead == nil || !s.opt.PerLaunchTiming || s.opt.LeadNs <= 0 {
		return nil
	}
	if err := s.d.Launch(lead, Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, uint64(s.opt.LeadNs)); err != nil {
		return fmt.Errorf("launch %s: %w", lead.Name, err)
	}
	return nil
}

// stepRange runs fn inside the step annotation (name, from hStart) and
// returns the annotation's index and External id. The annotation is
// opened by hand and its event written by the caller: like a training
// loop that reads its loss, the step ends only after waiting for the GPU.
func (s *Session) stepRange(name string, hStart int64, fn func() error) (ann int, ext int64, err error) {
	ann, ext = len(s.anns), s.nextExt
	s.anns = append(s.anns, annotation{name: name, cat: "user_annotation", ext: ext, start: hStart, parent: -1})
	s.nextExt++
	s.open = append(s.open, ann)
	err = fn()
	s.open = s.open[:len(s.open)-1]
	return ann, ext, err
}

// waitStep ends an event-timed step: it records gEnd, waits for it (the
// wait is the step's cuEventSynchronize), writes the step's host range and
// sets its host and wall times.
func (s *Session) waitStep(name string, stepExt, hStart int64, gEnd EventID) error {
	if err := s.d.Record(gEnd); err != nil {
		return fmt.Errorf("record step end event: %w", err)
	}
	hEnd := s.clk.Now()
	if err := s.d.SyncEvent(gEnd); err != nil {
		return fmt.Errorf("wait for step end: %w", err)
	}
	hDone := s.clk.Now()
	s.hostEvent("cuda_driver", "cuEventSynchronize", hEnd, hDone-hEnd, []Arg{{"External id", stepExt}, {"cbid", cbidEventSynchronize}})
	s.hostEvent("user_annotation", name, hStart, hDone-hStart, []Arg{{"External id", stepExt}})
	s.cur.HostNs = hEnd - hStart
	s.cur.WallNs = hDone - hStart
	s.closeCallStats()
	return nil
}

// endStep writes the GPU span of every annotation of the step that had GPU
// work (on the given device and stream, as Kineto puts them) and files the
// step's stats.
func (s *Session) endStep(dev, stream int) {
	for _, a := range s.anns {
		if a.hasGPU {
			s.events = append(s.events, TraceEvent{Ph: "X", Cat: "gpu_user_annotation", Name: a.name, Pid: dev, Tid: stream,
				TsNs: a.gpuStart, DurNs: a.gpuEnd - a.gpuStart, Args: []Arg{{"External id", a.ext}}})
		}
	}
	s.anns = s.anns[:0]
	s.Steps = append(s.Steps, s.cur)
}

// resolve turns the step's pending GPU records into trace events.
func (s *Session) resolve() error {
	for _, p := range s.pend {
		ts, err := s.cal.hostTime(s.d, p.start)
		if err != nil {
			return fmt.Errorf("time of %s: %w", p.name, err)
		}
		dur, err := s.d.ElapsedNs(p.start, p.end)
		if err != nil {
			return fmt.Errorf("duration of %s: %w", p.name, err)
		}
		args := []Arg{{"External id", p.ext}, {"queued", 0}, {"device", s.dev.ID}, {"context", traceCtx},
			{"stream", traceStream}, {"correlation", p.corr}}
		if p.cat == "gpu_memcpy" {
			gbps := 0.0
			if dur > 0 {
				gbps = float64(p.bytes) / float64(dur) // bytes/ns = GB/s
			}
			args = append(args, Arg{"bytes", p.bytes}, Arg{"memory bandwidth (GB/s)", gbps})
		}
		args = append(args, p.args...)
		s.events = append(s.events,
			TraceEvent{Ph: "X", Cat: p.cat, Name: p.name, Pid: s.dev.ID, Tid: traceStream, TsNs: ts, DurNs: dur, Args: args},
			TraceEvent{Ph: "f", Cat: "ac2g", Name: "ac2g", Pid: s.dev.ID, Tid: traceStream, TsNs: ts, ID: p.corr})
		for _, i := range p.open {
			s.anns[i].widen(ts, ts+dur)
		}
		s.Ops = append(s.Ops, OpStat{Name: p.name, Cat: p.cat, Step: s.step, DurNs: dur, Bytes: p.bytes})
		s.pool.put(p.start)
		s.pool.put(p.end)
	}
	s.pend = s.pend[:0]
	return nil
}

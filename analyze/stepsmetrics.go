package analyze

import (
	"sync"

	"github.com/tracelens/tracelens/trace"
)

// steps fills Result.Steps and StepStats: per step its times and counts,
// then the medians, steady-state figures, periods, ledgers and steady
// categories over them.
func (ix *index) steps(r *Result) {
	done := ix.clock.start("metrics: steps' GPU work")
	works := ix.stepWorks(r.Device)
	done()
	// The ledger index reads only the steps' windows and the facts: it
	// is built beside the step times, counts and periods.
	var li *ledgerIndex
	var wg sync.WaitGroup
	if len(works) > 0 {
		wg.Go(func() {
			defer ix.clock.start("metrics: ledger index")()
			li = ix.newLedgerIndex(stepWindows(works))
		})
	}
	done = ix.clock.start("metrics: step times and counts")
	ix.stepTimes(r, works)
	ix.stepCounts(r)
	done()
	if len(r.Steps) == 0 {
		wg.Wait()
		stepMedians(r)
		return
	}
	done = ix.clock.start("metrics: periods")
	ix.stepPeriods(r, works)
	done()
	wg.Wait()
	// The calls' figures wait for the ledger index, which reads the
	// calls' durations in its pass over them, and the GPU counts for the
	// ledgers, which read each step's GPU work: the 72-byte calls and
	// the GPU activities are read once, not twice. The medians and the
	// steady figures read both.
	done = ix.clock.start("metrics: step calls")
	ix.stepCalls(r, li.callDur)
	li.callDur = nil
	done()
	done = ix.clock.start("metrics: ledgers")
	ix.ledgers(r, works, li)
	done()
	done = ix.clock.start("metrics: steady steps")
	stepMedians(r)
	ix.steadyStats(r)
	done()
	done = ix.clock.start("metrics: steady categories")
	if spinAsWaiting(r) {
		stepMedians(r)
		ix.steadyStats(r)
	}
	ix.steadyCategories(r)
	done()
}

// stepTimes fills each step's wall, GPU busy and idle time and its idle
// split into launch gaps and long gaps, from the steps' GPU work.
func (ix *index) stepTimes(r *Result, works []stepWork) {
	t := ix.t
	origin := ix.whole.Start
	ndev := max(len(ix.devices), 1)
	r.Steps = make([]Step, len(t.Steps))
	for i, st := range t.Steps {
		s := &r.Steps[i]
		w := &works[i]
		s.Number, s.Synthetic = st.Number, st.Synthetic
		s.StartUs = us(trace.Duration(st.Start - origin))
		s.HostWallUs = us(st.Dur())
		s.WallUs = us(w.spanDuration)
		s.IrreducibleGPUUs = w.irreducible
		s.ComputeBusyUs, s.CommunicationUs = w.computeUs, w.commUs
		s.GPUBusyUs = w.busyUs
		s.GPUIdleUs = max(s.WallUs*float64(ndev)-s.GPUBusyUs, 0)
		if s.WallUs > 0 {
			s.GPUBusyShare = min(s.GPUBusyUs/(s.WallUs*float64(ndev)), 1)
		}
		s.LaunchGapIdleUs, s.LongGapIdleUs = w.launchGapUs, w.longGapUs
	}
}

// stepCounts fills each step's top-level op time (its kernels, memcpys,
// GPU-bound and kernel time are counted with its ledger: countGPU).
func (ix *index) stepCounts(r *Result) {
	t := ix.t
	// The ops' parent, start and end are read from the HostTable's
	// columns: 20 bytes an op, not the 96 of the ops themselves.
	steps, ops := newStepCursor(t), &ix.host.ops
	for i, parent := range ops.parent {
		if parent != trace.None {
			continue // nested time is already inside its top-level op
		}
		if st := steps.of(ops.start[i]); st >= 0 {
			r.Steps[st].CPUOpUs += us(trace.Duration(ops.end[i] - ops.start[i]))
		}
	}
}

// countGPU counts GPU activity g, one of step st's own, into its
// kernels, memcpys, GPU-bound and kernel time.
func (ix *index) countGPU(st *Step, g trace.Index, a *trace.GPUActivity) {
	st.GPUBoundUs += us(ix.CriticalFacts.Of(int(g)))
	switch a.Kind {
	case trace.Kernel:
		st.Kernels++
		st.KernelUs += us(a.Dur())
	case trace.Memcpy:
		st.Memcpys++
	}
}

// stepCalls fills each step's launches, launch time and sync time from
// the calls' durations (dur, by call; the ledger index's), summed in
// call order.
func (ix *index) stepCalls(r *Result, dur []trace.Duration) {
	for i, st := range ix.apiStep {
		if st < 0 {
			continue
		}
		// The Launches fact classified every call once.
		if ix.launch[i] {
			r.Steps[st].Launches++
			r.Steps[st].LaunchAPIUs += us(dur[i])
		}
		if ix.sync[i] {
			r.Steps[st].SyncUs += us(dur[i])
		}
	}
}

// stepMedians fills StepStats' count, first step and the medians over all
// steps and over the steps after the first.
func stepMedians(r *Result) {
	ss := &r.StepStats
	ss.Count = len(r.Steps)
	if len(r.Steps) == 0 {
		return
	}
	ss.FirstStepUs = r.Steps[0].WallUs
	med := func(f func(*Step) float64, skipFirst bool) float64 {
		steps := r.Steps
		if skipFirst && len(steps) > 1 {
			steps = steps[1:]
		}
		v := make([]float64, len(steps))
		for i := range steps {
			v[i] = f(&steps[i])
		}
		return median(v)
	}
	wall := func(s *Step) float64 { return s.WallUs }
	busy := func(s *Step) float64 { return s.GPUBusyUs }
	launches := func(s *Step) float64 { return float64(s.Launches) }
	api := func(s *Step) float64 { return s.LaunchAPIUs }
	ss.MedianWallUs, ss.MedianWallUsNoFirst = med(wall, false), med(wall, true)
	ss.MedianGPUBusyUs, ss.MedianGPUBusyUsNoFirst = med(busy, false), med(busy, true)
	ss.MedianLaunches, ss.MedianLaunchesNoFirst = med(launches, false), med(launches, true)
	ss.MedianLaunchAPIUs, ss.MedianLaunchAPIUsNoFirst = med(api, false), med(api, true)
}

// steadyStats fills StepStats' steady-state medians: the one definition of
// "the step" that findings' shares and every face's headline use.
func (ix *index) steadyStats(r *Result) {
	ss := &r.StepStats
	steps := steadySteps(r)
	ss.SteadySteps = len(steps)
	ss.SteadyWallUs = medianOf(steps, func(s *Step) float64 { return s.WallUs })
	ss.SteadyGPUBusyUs = medianOf(steps, func(s *Step) float64 { return s.GPUBusyUs })
	ss.SteadyGPUIdleUs = medianOf(steps, func(s *Step) float64 { return s.GPUIdleUs })
	ss.SteadyLaunchGapUs = medianOf(steps, func(s *Step) float64 { return s.LaunchGapIdleUs })
	ss.SteadyLongGapUs = medianOf(steps, func(s *Step) float64 { return s.LongGapIdleUs })
	ss.SteadyKernels = medianOf(steps, func(s *Step) float64 { return float64(s.Kernels) })
	ss.SteadyLaunches = medianOf(steps, func(s *Step) float64 { return float64(s.Launches) })
	ss.SteadyLaunchAPIUs = medianOf(steps, func(s *Step) float64 { return s.LaunchAPIUs })
	ss.SteadyIrreducibleUs = min(medianOf(steps, func(s *Step) float64 { return s.IrreducibleGPUUs }), ss.SteadyGPUBusyUs)
	ss.SteadyGPUBoundUs = medianOf(steps, func(s *Step) float64 { return s.GPUBoundUs })
	// The median of per-step shares, not busy over wall of two medians:
	// each step's share is within [0, 1], so their median is too.
	ss.SteadyGPUBusyShare = min(medianOf(steps, func(s *Step) float64 { return s.GPUBusyShare }), 1)
}

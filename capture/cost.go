package capture

import (
	"fmt"
	"math"
	"sort"
)

// CUPTICost is what CUPTI's recording costs the host per launch, measured
// in the capture's own process: after the recorded steps, unrecorded steps
// of the same workload run with CUPTI's records switched off and on, in
// alternating order (off-on, on-off, ...), and each round's "on" step is
// compared with its own "off" step. Pairing within a round is what makes the
// figure usable: separate processes differ by ±1 µs per launch from each
// other (placement, clocks, the driver's own state), more than CUPTI costs.
type CUPTICost struct {
	// Rounds is the number of off/on pairs measured (after one unmeasured
	// pair that warms both settings up).
	Rounds int
	// Launches is how many launch and copy calls one step makes.
	Launches int
	// CallOffNs and CallOnNs are the medians over rounds of a step's median
	// time inside one launch call, without and with CUPTI's records.
	CallOffNs, CallOnNs int64
	// CallDiff is the paired difference on − off of the median launch
	// call: the median over rounds and its interquartile range. This is the
	// host overhead per launch that CUPTI adds above a bare launch call.
	CallDiff Quartiles
	// StepDiff is the paired difference on − off of the step's host time
	// (first call to last, before waiting for the GPU) per launch.
	StepDiff Quartiles
}

// Quartiles are the median and the interquartile range of a sample, in
// nanoseconds.
type Quartiles struct{ Q1, Median, Q3 int64 }

// ints is [Q1, median, Q3], as the trace's metadata writes them.
func (q Quartiles) ints() []int { return []int{int(q.Q1), int(q.Median), int(q.Q3)} }

// signedUs formats nanoseconds as microseconds with an explicit sign.
func signedUs(ns int64) string {
	if ns >= 0 {
		return "+" + us(ns)
	}
	return us(ns)
}

// quartiles of v (not sorted in place); linear interpolation between ranks,
// as numpy's default, so small samples give stable ranges.
func quartiles(v []int64) Quartiles {
	if len(v) == 0 {
		return Quartiles{}
	}
	c := append([]int64(nil), v...)
	sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	at := func(p float64) int64 {
		x := p * float64(len(c)-1)
		i := int(x)
		if i+1 >= len(c) {
			return c[len(c)-1]
		}
		return int64(math.Round(float64(c[i]) + (x-float64(i))*float64(c[i+1]-c[i])))
	}
	return Quartiles{Q1: at(0.25), Median: at(0.5), Q3: at(0.75)}
}

// costHalf is one unrecorded step of the cost measurement.
type costHalf struct {
	launches        int
	callMedianNs    int64
	hostPerLaunchNs int64
}

// measureCUPTICost runs rounds off/on pairs of unrecorded workload steps
// (see CUPTICost). It runs after the recorded steps' records were
// converted: it flushes CUPTI before each step and drops what it recorded.
// prime is an empty kernel launched after each flush, so that CUPTI asks
// for its next buffer outside the measured step; CUPTI is left recording.
func (s *Session) measureCUPTICost(step func() error, prime *Kernel, rounds int) (*CUPTICost, error) {
	var off, on []costHalf
	var callDiff, stepDiff []int64
	for r := -1; r < rounds; r++ {
		order := [2]bool{false, true}
		if r%2 != 0 { // rounds 1, 3, ... and the warm-up pair start with CUPTI on
			order = [2]bool{true, false}
		}
		var pair [2]costHalf
		for _, rec := range order {
			h, err := s.costStep(step, prime, rec)
			if err != nil {
				return nil, fmt.Errorf("CUPTI cost round %d (records %s): %w", r+1, onOff(rec), err)
			}
			if rec {
				pair[1] = h
			} else {
				pair[0] = h
			}
		}
		if r < 0 {
			continue
		}
		off, on = append(off, pair[0]), append(on, pair[1])
		callDiff = append(callDiff, pair[1].callMedianNs-pair[0].callMedianNs)
		stepDiff = append(stepDiff, pair[1].hostPerLaunchNs-pair[0].hostPerLaunchNs)
	}
	if err := s.src.Resume(); err != nil {
		return nil, fmt.Errorf("CUPTI cost: switch records back on: %w", err)
	}
	c := &CUPTICost{Rounds: rounds, CallDiff: quartiles(callDiff), StepDiff: quartiles(stepDiff)}
	if rounds > 0 {
		c.Launches = on[0].launches
	}
	c.CallOffNs = medianI64(field(off, func(h costHalf) int64 { return h.callMedianNs }))
	c.CallOnNs = medianI64(field(on, func(h costHalf) int64 { return h.callMedianNs }))
	return c, nil
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

func field(h []costHalf, f func(costHalf) int64) []int64 {
	v := make([]int64, len(h))
	for i := range h {
		v[i] = f(h[i])
	}
	return v
}

// costStep runs one unrecorded step with CUPTI's records on or off and
// times its launch calls as a recorded step does (Session.issue).
func (s *Session) costStep(step func() error, prime *Kernel, rec bool) (costHalf, error) {
	switchRecords := s.src.Pause
	if rec {
		switchRecords = s.src.Resume
	}
	if err := switchRecords(); err != nil {
		return costHalf{}, fmt.Errorf("switch CUPTI records %s: %w", onOff(rec), err)
	}
	// Drop what earlier steps recorded; with records on, the empty launch
	// makes CUPTI take its next buffer now rather than in the step.
	if _, err := s.src.Flush(); err != nil {
		return costHalf{}, fmt.Errorf("flush CUPTI records: %w", err)
	}
	if rec && prime != nil {
		if err := s.d.Launch(prime, Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, uint64(0)); err != nil {
			return costHalf{}, fmt.Errorf("launch %s: %w", prime.Name, err)
		}
	}
	if err := s.d.Synchronize(); err != nil {
		return costHalf{}, fmt.Errorf("wait before the step: %w", err)
	}
	s.cur = StepStat{}
	s.openCallStats()
	s.measuring = true
	h0 := s.clk.Now()
	err := step()
	h1 := s.clk.Now()
	s.measuring = false
	if err != nil {
		return costHalf{}, err
	}
	if err := s.d.Synchronize(); err != nil {
		return costHalf{}, fmt.Errorf("wait for the step: %w", err)
	}
	s.closeCallStats()
	h := costHalf{launches: s.cur.Launches, callMedianNs: s.cur.LaunchCallMedianNs}
	if s.cur.Launches > 0 {
		h.hostPerLaunchNs = (h1 - h0) / int64(s.cur.Launches)
	}
	s.cur = StepStat{}
	return h, nil
}

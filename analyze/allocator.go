package analyze

import (
	"fmt"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// Thresholds of allocator-churn.
const (
	// AllocatorChurnMinCalls is how many device allocations and frees a
	// steady step must make (median) to be churn: a caching allocator
	// that has warmed up makes none.
	AllocatorChurnMinCalls = 2
	// AllocatorChurnMinShare is the share of the steady step the host
	// must spend in them while the GPU idles.
	AllocatorChurnMinShare = 0.02
)

// AllocatorChurn finds device memory allocated and freed every step.
var AllocatorChurn = &Analyzer{
	Name: "allocator-churn",
	Doc: fmt.Sprintf("Counts device allocations and frees (cudaMalloc/cudaFree, cudaMallocAsync/cudaFreeAsync, cuMemAlloc/cuMemFree, "+
		"hipMalloc/hipFree) in the steady-state steps: a warmed-up caching allocator makes none, so %d or more per step mean its cache is "+
		"emptied (torch.cuda.empty_cache()) or shapes keep changing. cudaFree synchronizes the device. Reported when the host spends at "+
		"least %.0f%% of the step in them while the GPU idles. Saving model: the time in those calls per step during which the GPU is idle, "+
		"and after each free the GPU's idle time until the host launched more work, at most the GPU work the free waited for (as a "+
		"host sync's refill); untraced, the refill and the host's run-up less the profiler's own host work.",
		AllocatorChurnMinCalls, AllocatorChurnMinShare*100),
	Requires: []*Analyzer{Steps, Attribution, IdleGaps, ProfilerClock},
	Run:      runAllocatorChurn,
}

// deviceAllocCall reports whether an API call allocates or frees device
// memory, and which ("alloc" or "free").
func deviceAllocCall(name string) (string, bool) {
	n := strings.ToLower(name)
	switch {
	case strings.HasPrefix(n, "cudamallochost") || strings.HasPrefix(n, "cudafreehost"):
		return "", false // pinned host memory
	case strings.HasPrefix(n, "cudamalloc") || strings.HasPrefix(n, "cumemalloc") || strings.HasPrefix(n, "hipmalloc"):
		return "alloc", true
	case strings.HasPrefix(n, "cudafree") || strings.HasPrefix(n, "cumemfree") || strings.HasPrefix(n, "hipfree"):
		return "free", true
	}
	return "", false
}

// allocCallKind is deviceAllocCall's kind of an API call named name (""
// for a call that neither allocates nor frees), the answer a nameCache
// remembers: a few names make every call, and lowering one with capitals
// (each launch's) copies it.
func allocCallKind(name string) string {
	kind, _ := deviceAllocCall(name)
	return kind
}

// churnStep is one steady step's allocator activity: idleUs is what the
// calls cost the step (the GPU idle during them, and after a free, which
// synchronizes the device, its refill: syncCost), untracedUs the same for
// the program run without the profiler (syncCostUntraced).
type churnStep struct {
	calls, emptyCache int
	hostUs, idleUs    float64
	untracedUs        float64
	// runUp is where the host's run-up to the next free starts (the last
	// free's end, else the step start), once started.
	runUp   trace.Time
	started bool
}

func runAllocatorChurn(p *Pass) ([]Finding, error) {
	t, ix, r := p.Trace, p.ix, p.Result
	if len(r.Steps) == 0 {
		return nil, nil
	}
	first := FirstSteady(len(t.Steps))
	per := make([]churnStep, len(t.Steps))
	sites := map[string]int{}
	byName := map[string]int{}
	clock, err := profilerClockOf(p)
	if err != nil {
		return nil, err
	}
	var kinds nameCache[string]
	for i := range t.APICalls {
		c := &t.APICalls[i]
		kind := kinds.get(c.Name, allocCallKind)
		if kind == "" {
			continue
		}
		st := int(ix.apiStep[i])
		if st < first {
			continue
		}
		per[st].add(ix, clock, c, kind == "free", t.Steps[st].Start)
		byName[c.Name]++
		sites[allocSite(t, ix, c)]++
	}
	// A host-bound step gains the host time in the calls whatever the GPU
	// did meanwhile: the step is the longer of its host and GPU work.
	for st := first; st < len(per) && st < len(r.Steps); st++ {
		s := &per[st]
		s.idleUs = max(s.idleUs, pipelineSavingUs(r.Steps[st].HostPeriodUs, ix.stepGPUPerDevice(r, st), s.hostUs, 0))
	}
	steady := per[first:]
	calls := medianChurn(steady, func(s churnStep) float64 { return float64(s.calls) })
	idle := medianChurn(steady, func(s churnStep) float64 { return s.idleUs })
	step := r.StepStats.SteadyWallUs
	if calls < AllocatorChurnMinCalls || step <= 0 || idle < AllocatorChurnMinShare*step {
		return nil, nil
	}
	// What only the finding reads: the empty_cache calls (a walk over
	// every Python frame) and the untraced saving.
	countEmptyCache(t, per, first)
	if clock != nil {
		for st := first; st < len(per) && st < len(r.Steps); st++ {
			s := &per[st]
			s.untracedUs = max(s.untracedUs, pipelineSavingUs(clock.untracedHostUs(t, r, st), ix.stepGPUPerDevice(r, st), s.hostUs, 0))
		}
	}
	host := medianChurn(steady, func(s churnStep) float64 { return s.hostUs })
	untraced := medianChurn(steady, func(s churnStep) float64 { return s.untracedUs })
	empty := medianChurn(steady, func(s churnStep) float64 { return float64(s.emptyCache) })
	f := allocatorFinding(calls, host, idle, empty, step, byName, sites)
	if clock != nil {
		f.UntracedSavingUs = min(untraced, r.StepStats.SteadyPeriodUs)
	}
	if cudaC(t) {
		f.Fix = "allocate device buffers once and reuse them across iterations instead of cudaMalloc/cudaFree each time " +
			"(cudaFree synchronizes the device), or use stream-ordered allocation from a pool (cudaMallocAsync/cudaFreeAsync " +
			"with cudaMemPoolAttrReleaseThreshold set so the pool keeps its memory)"
	}
	return []Finding{f}, nil
}

// allocatorFinding builds allocator-churn's finding from the steady
// step's medians and where the calls come from.
func allocatorFinding(calls, host, idle, empty, step float64, byName, sites map[string]int) Finding {
	tb := NewTable(Col("called from", KindName), Col("calls", KindCount))
	for _, s := range topKeys(sites, 5) {
		tb.Add(NameCell(s), Count(float64(sites[s])))
	}
	names := topKeys(byName, 4)
	cause := "shapes that change from step to step (each new size needs new blocks)"
	fix := "keep tensor shapes steady or bucket them to a few sizes so the caching allocator reuses its blocks; preallocate buffers " +
		"that are needed every step; PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True lets one segment grow instead of new ones"
	if empty >= 1 {
		cause = fmt.Sprintf("torch.cuda.empty_cache() called %s per step returns the cached blocks to the driver, so the next step allocates them again",
			FormatCount(empty))
		fix = "remove torch.cuda.empty_cache() from the loop (call it, if at all, outside the timed region, e.g. before evaluation); " + fix
	}
	return Finding{
		Title: fmt.Sprintf("allocator churn: %s cudaMalloc/cudaFree per step, %s of host time (%s with the GPU idle)",
			FormatCount(calls), fmtUs(host), fmtUs(idle)),
		Subject:    "device allocations every step",
		Severity:   severityByShare(idle / step),
		SavingUs:   idle,
		SavingFrom: FromGPUIdle,
		Measures: []Measure{
			{"allocations and frees per step", Count(calls)},
			{"host time in them per step", DurUs(host)},
			{"of which the GPU is idle", DurUs(idle)},
			{"empty_cache calls per step", Count(empty)},
		},
		Evidence: []Evidence{
			{Text: fmt.Sprintf("median steady step: %s device allocations and frees (%s) taking %s of host time, %s of it with the GPU idle "+
				"(cudaFree synchronizes the device)", FormatCount(calls), strings.Join(names, ", "), fmtUs(host), fmtUs(idle))},
			{Text: "cause: " + cause},
			{Text: "where the calls are made (steady steps):", Table: tb},
			{Text: "saving model: the time in allocation calls per step during which the GPU is idle, plus after each cudaFree (a device synchronization) the GPU's idle time until the host launched more work, at most the GPU work the free waited for; a warmed-up caching allocator makes none"},
		},
		Fix:        fix,
		Confidence: High,
	}
}

// allocSite names where an allocation call was made: the user's line, else
// the innermost Python frame, else the op.
func allocSite(t *trace.Trace, ix *index, c *trace.APICall) string {
	if c.Frame != trace.None {
		if u := ix.userFrameOf(c.Frame); u != trace.None {
			return t.Frames[u].Name
		}
		return t.Frames[c.Frame].Name
	}
	if c.Op != trace.None {
		return t.Ops[c.Op].Name
	}
	return "(no op or Python frame recorded)"
}

// medianChurn is the median of f over the steady steps.
func medianChurn(steps []churnStep, f func(churnStep) float64) float64 {
	v := make([]float64, len(steps))
	for i, s := range steps {
		v[i] = f(s)
	}
	return median(v)
}

// add counts one allocation or free call c of the step starting at
// stepStart.
func (s *churnStep) add(ix *index, clock *profilerClock, c *trace.APICall, free bool, stepStart trace.Time) {
	s.calls++
	s.hostUs += us(c.Dur())
	if !free {
		idle := us(c.Dur() - ix.busyIn(c.Start, c.End))
		s.idleUs += idle
		s.untracedUs += idle
		return
	}
	if !s.started {
		s.runUp, s.started = stepStart, true
	}
	s.idleUs += us(ix.syncCost(c.Span))
	if clock != nil {
		s.untracedUs += ix.syncCostUntraced(clock, c.Span, s.runUp)
	}
	s.runUp = max(s.runUp, c.End)
}

// stepGPUPerDevice is step st's GPU busy time per device (µs).
func (ix *index) stepGPUPerDevice(r *Result, st int) float64 {
	return r.Steps[st].GPUBusyUs / float64(max(len(ix.devices), 1))
}

// countEmptyCache counts into per the torch.cuda.empty_cache() calls of
// each step from first on, walking the frames chunk by chunk side by side.
func countEmptyCache(t *trace.Trace, per []churnStep, first int) {
	found := mapChunks(len(t.Frames), func(lo, hi int) []int {
		var in []int
		for i := lo; i < hi; i++ {
			if strings.HasSuffix(t.Frames[i].Name, ": empty_cache") {
				in = append(in, i)
			}
		}
		return in
	})
	for _, in := range found {
		for _, i := range in {
			if st := t.StepOf(t.Frames[i].Start); st >= first {
				per[st].emptyCache++
			}
		}
	}
}

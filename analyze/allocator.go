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
		"least %.0f%% of the step in them while the GPU idles. Saving model: the time in those calls per step during which the GPU is idle.",
		AllocatorChurnMinCalls, AllocatorChurnMinShare*100),
	Requires: []*Analyzer{Steps, Attribution, IdleGaps},
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

// churnStep is one steady step's allocator activity.
type churnStep struct {
	calls, emptyCache int
	hostUs, idleUs    float64
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
	for i := range t.APICalls {
		c := &t.APICalls[i]
		if _, ok := deviceAllocCall(c.Name); !ok {
			continue
		}
		st := int(ix.apiStep[i])
		if st < first {
			continue
		}
		s := &per[st]
		s.calls++
		s.hostUs += us(c.Dur())
		s.idleUs += us(c.Dur() - ix.busyIn(c.Start, c.End))
		byName[c.Name]++
		sites[allocSite(t, ix, c)]++
	}
	for i := range t.Frames {
		if f := &t.Frames[i]; strings.HasSuffix(f.Name, ": empty_cache") {
			if st := t.StepOf(f.Start); st >= first {
				per[st].emptyCache++
			}
		}
	}
	steady := per[first:]
	calls := medianChurn(steady, func(s churnStep) float64 { return float64(s.calls) })
	idle := medianChurn(steady, func(s churnStep) float64 { return s.idleUs })
	host := medianChurn(steady, func(s churnStep) float64 { return s.hostUs })
	empty := medianChurn(steady, func(s churnStep) float64 { return float64(s.emptyCache) })
	step := r.StepStats.SteadyWallUs
	if calls < AllocatorChurnMinCalls || step <= 0 || idle < AllocatorChurnMinShare*step {
		return nil, nil
	}
	f := allocatorFinding(calls, host, idle, empty, step, byName, sites)
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
			{Text: "saving model: the time in allocation calls per step during which the GPU is idle; a warmed-up caching allocator makes none"},
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

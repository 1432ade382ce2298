package analyze

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// HostSync finds calls that block the host until the GPU catches up.
var HostSync = &Analyzer{
	Name: "host-sync",
	Doc: fmt.Sprintf("Finds blocking synchronisation: cudaStreamSynchronize/cudaDeviceSynchronize/cudaEventSynchronize and synchronous "+
		"cudaMemcpy calls, attributed to the framework op around them (aten::item/_local_scalar_dense behind .item(), aten::to/copy_ "+
		"behind .cpu() or a pageable copy, aten::nonzero, ...) and the user's Python line. Syncs inside an op are implicit (the user may "+
		"not know); an explicit torch.cuda.synchronize() counts only when more work is launched after it in the same step (one at the "+
		"end of a step, for timing, costs nothing) and never in traces without step markers; syncs inside torch.compile regions are "+
		"left to compile-overhead. Syncs a framework makes on its own (outside any op, from inside a library's Python such as "+
		"DistributedDataParallel.forward: no user op or line) and syncs during which a communication kernel runs (a wait on another "+
		"rank's collective) are listed but not counted. Reported when at least %d such sync per step. Saving model: the time the host is "+
		"blocked in them per step while the GPU is idle too (a host waiting on a busy GPU costs nothing), plus the GPU's idle time after "+
		"each until the host launched more work, at most the GPU work the sync waited for (with no sync the host runs ahead and keeps "+
		"the GPU's queue full); a sync's wait starts at its op's pageable copy under %s where it made one (the copy call already waited "+
		"for the GPU: .cpu() of a few values); in a step whose host work is the longer, at least the host time blocked in them (the host's "+
		"wait delays all the host work after it), never more than the step's period beyond its GPU work, less what the rank waits "+
		"for its peers (the peer sets the step).", HostSyncMinPerStep, FormatBytes(PageableMinBytes)),
	Requires: []*Analyzer{Steps, Launches, Attribution, IdleGaps, Phases, ProfilerClock},
	Run:      runHostSync,
}

// syncSite groups blocking calls by the op and Python line behind them.
type syncSite struct {
	op, line string
	calls    int
	time     trace.Duration
}

// hostSyncs is what scanHostSyncs found: the counted blocking calls by
// site, their cost to the traced step and to the untraced program, and
// the calls left out with why.
type hostSyncs struct {
	sites map[string]*syncSite
	order []string
	total trace.Duration
	// traced and hostIn are, per step, the calls' cost to the traced step
	// (syncCost) and the host time in them, µs; untraced and untracedIn
	// the same for the untraced program (syncUntraced), nil without a
	// profiler clock.
	traced, hostIn, untraced, untracedIn []float64
	clock                                *profilerClock
	count                                int
	excluded                             map[string]int
	exOrder                              []string
}

func runHostSync(p *Pass) ([]Finding, error) {
	clock, err := profilerClockOf(p)
	if err != nil {
		return nil, err
	}
	h := scanHostSyncs(p, clock)
	steps := float64(max(len(p.Trace.Steps), 1))
	perStep := float64(h.count) / steps
	if h.count == 0 || perStep < HostSyncMinPerStep || h.total == 0 {
		return nil, nil
	}
	sites, order, total := h.sites, h.order, h.total
	slices.SortFunc(order, func(a, b string) int { return cmp.Compare(sites[b].calls, sites[a].calls) })
	tb := NewTable(Col("op", KindName), Col("python", KindSource), Col("calls", KindCount), Col("per step", KindCount), Col("blocked", KindDuration))
	var lines []string
	for _, k := range order {
		s := sites[k]
		tb.Add(NameCell(s.op), SourceCell(s.line), Count(float64(s.calls)), Count(math.Round(float64(s.calls)/steps*10)/10), Dur(s.time))
		if s.line != "" && !slices.Contains(lines, s.line) {
			lines = append(lines, s.line)
		}
	}
	saving := min(tracedSyncsUs(p, h)/steps, max(p.Result.StepStats.SteadyPeriodUs, us(total)/steps))
	sev := Low
	if sh := p.shareOfStep(saving); sh >= 0.05 {
		sev = Medium
	}
	where := strings.Join(lines, "; ")
	if where == "" {
		where = "the ops listed"
	}
	return []Finding{{
		Title:            fmt.Sprintf("%.0f blocking host syncs per step (%s blocked in total), from %s", perStep, total, ClipName(sites[order[0]].op, 40)),
		Subject:          sites[order[0]].op,
		Severity:         sev,
		SavingUs:         saving,
		UntracedSavingUs: min(untracedSyncsUs(p, h)/steps, p.Result.StepStats.SteadyPeriodUs),
		SavingFrom:       FromGPUIdle,
		Measures: []Measure{
			{"syncs per step", Count(perStep)},
			{"blocked in total", Dur(total)},
			{"sync calls", Count(float64(h.count))},
		},
		Evidence: append([]Evidence{
			{Text: "blocking calls inside steps, by the op and Python line behind them (blocked: the part of each call during which the GPU was idle too, plus the GPU idle after it until the host launched more work, at most the GPU work the call waited for):", Table: tb},
			{Text: "saving model: per step, host time blocked in these syncs while the GPU idled, plus the GPU's idle time after each until the host had launched more work (at most the GPU work the sync waited for, which the host's next work would have overlapped); without them the host runs ahead and the GPU's queue stays full; in a step whose host work outlasts its GPU work, at least the host time blocked in the syncs, which delays all the host work after them (up to the host's lead over the GPU). Untraced: the same with the profiler's own host work taken out of the refill, of the host's run-up to each sync (a host that reaches the sync sooner waits longer for a GPU that was ahead) and of the host work the step is compared with"},
		}, excludedSyncs(h.excluded, h.exOrder)...),
		Fix:        hostSyncFix(p.Trace, where),
		Confidence: High,
	}}, nil
}

// scanHostSyncs walks the blocking calls inside steps: it counts those
// host-sync reports, by site, with what each costs the step traced
// (syncCost) and untraced (syncCostUntraced), and the ones it leaves out.
func scanHostSyncs(p *Pass, clock *profilerClock) *hostSyncs {
	t, ix := p.Trace, p.ix
	// lastLaunch[step] is the start of the last launch call in each step,
	// to tell end-of-step syncs from mid-step ones.
	lastLaunch := make([]trace.Time, len(t.Steps))
	for i := range t.APICalls {
		if s := ix.apiStep[i]; s >= 0 && isLaunchCall(&t.APICalls[i]) {
			lastLaunch[s] = max(lastLaunch[s], t.APICalls[i].Start)
		}
	}
	// runUp[step] is where the host's run-up to the next sync starts: the
	// last counted sync's end, else the step's start.
	runUp := make([]trace.Time, len(t.Steps))
	for i := range t.Steps {
		runUp[i] = t.Steps[i].Start
	}
	copyStart := smallPageableCopyStarts(t)
	h := &hostSyncs{sites: map[string]*syncSite{}, excluded: map[string]int{}, clock: clock,
		traced: make([]float64, len(t.Steps)), hostIn: make([]float64, len(t.Steps))}
	if clock != nil {
		h.untraced, h.untracedIn = make([]float64, len(t.Steps)), make([]float64, len(t.Steps))
	}
	for i := range t.APICalls {
		c := &t.APICalls[i]
		st := ix.apiStep[i]
		if !IsSyncCall(c.Name) || st < 0 {
			continue
		}
		op := ""
		if o := ix.outerOp(c.Op); o != trace.None {
			op = t.Ops[o].Name
			if compiledRegion(op) {
				continue // compile-overhead's business (warm-up, CUDA-graph recording)
			}
		} else if t.Steps[st].Synthetic || c.Start > lastLaunch[st] {
			// An explicit torch.cuda.synchronize() after a step's last
			// launch, or anywhere in a trace without step markers (where
			// it usually times a call), is deliberate.
			continue
		}
		if why, where := ix.syncExcluded(c); why != "" {
			h.exclude(where + ": " + why)
			continue
		}
		line := ""
		if f := ix.userFrameOf(c.Frame); f != trace.None {
			line = t.Frames[f].Name
		}
		if op == "" {
			op = c.Name
		}
		// The part of the wait during which the GPU idled, and the GPU's
		// refill after it, cost the step. The wait starts at the op's
		// small pageable copy where it made one (.cpu() of a few bytes:
		// the copy call returns when the GPU has run the work before it,
		// and the sync after it finds nothing left to wait for).
		span := c.Span
		if from, ok := copyStart[c.Op]; ok && c.Op != trace.None && from < span.Start {
			span.Start = max(from, t.Steps[st].Start)
		}
		blocked := ix.syncCost(span)
		h.traced[st] += us(blocked)
		h.hostIn[st] += us(span.Dur())
		if clock != nil {
			cost, in := ix.syncUntraced(clock, span, runUp[st])
			h.untraced[st] += cost
			h.untracedIn[st] += in
			runUp[st] = max(runUp[st], c.End)
		}
		h.count1(op, line, blocked)
	}
	return h
}

// exclude counts a blocking call left out, by where and why.
func (h *hostSyncs) exclude(k string) {
	if h.excluded[k] == 0 {
		h.exOrder = append(h.exOrder, k)
	}
	h.excluded[k]++
}

// count1 counts one blocking call at its site (op and Python line).
func (h *hostSyncs) count1(op, line string, blocked trace.Duration) {
	key := op + "\x00" + line
	s := h.sites[key]
	if s == nil {
		s = &syncSite{op: op, line: line}
		h.sites[key] = s
		h.order = append(h.order, key)
	}
	s.calls++
	s.time += blocked
	h.total += blocked
	h.count++
}

// smallPageableCopyStarts maps each op that made a pageable host↔device
// copy under PageableMinBytes (pageable-memcpy's floor: the larger ones
// are its to price) to the start of its first such copy call. A pageable
// copy is synchronous for the host, so the call waits for the GPU work
// queued before it as a sync would.
func smallPageableCopyStarts(t *trace.Trace) map[trace.Index]trace.Time {
	m := map[trace.Index]trace.Time{}
	for i := range t.APICalls {
		c := &t.APICalls[i]
		if c.Op == trace.None || c.FirstGPU == trace.None {
			continue
		}
		a := &t.GPU[c.FirstGPU]
		if a.Kind != trace.Memcpy || a.Src != trace.Pageable && a.Dst != trace.Pageable || a.Bytes >= PageableMinBytes {
			continue
		}
		if at, ok := m[c.Op]; !ok || c.Start < at {
			m[c.Op] = c.Start
		}
	}
	return m
}

// untracedSyncsUs is what the counted syncs cost the untraced program,
// summed over the steps: each step's syncCostUntraced (the GPU's idle
// refill after each sync), or, where more, what the step gains from the
// host time blocked in them: a host-bound step is the longer of its host
// and GPU work, and the host waiting in a sync delays all the host work
// after it (pipelineSavingUs; allocator-churn prices its blocking calls
// the same way). sync_mask's forward waits ~200 µs for the GPU in a step
// host-bound untraced, where the refill after it is ~36 µs.
func untracedSyncsUs(p *Pass, h *hostSyncs) float64 {
	// No bound by the step: the untraced host period is an estimate
	// (RMS residual ~1.7 ms a step), and its difference with the GPU's
	// work is mostly that error (sync_loss: 49 µs where the fix gave 197).
	// The untraced host reaches each sync sooner and waits the longer
	// for it: the profiler's cost before a sync is not time its step
	// saves (untracedIn over hostIn).
	host := func(st int) float64 {
		return h.clock.untracedHostUs(p.Trace, p.Result, st) + max(h.untracedIn[st]-h.hostIn[st], 0)
	}
	return h.syncsUs(p, h.untraced, h.untracedIn, host, nil)
}

// tracedSyncsUs is untracedSyncsUs for the traced step: each step's
// syncCost, or, in a step whose traced host period outlasts its GPU work,
// at least what the host time blocked in the syncs delays the rest of the
// host work (sync_mask: 66 µs a step of refills, 243 µs by the host's
// lead, and the fix gave the traced step 765 µs), never more than the
// step's period beyond its GPU work.
func tracedSyncsUs(p *Pass, h *hostSyncs) float64 {
	steps := p.Result.Steps
	return h.syncsUs(p, h.traced, h.hostIn, func(st int) float64 { return steps[st].HostPeriodUs }, func(st int) float64 { return steps[st].PeriodUs })
}

// syncsUs sums per step the larger of cost[st] and the pipeline saving
// of taking the host time blocked in the syncs (blocked[st]) out of a step whose host
// period is hostUs(st), and, with a stepUs, at most what the step's
// measured period has beyond its GPU work: with no sync the step still
// takes its GPU busy time. The step-level rules need one Result step per
// trace step.
func (h *hostSyncs) syncsUs(p *Pass, cost, blocked []float64, hostUs, stepUs func(st int) float64) float64 {
	t, r := p.Trace, p.Result
	var total float64
	for st := range cost {
		v := cost[st]
		if len(r.Steps) == len(t.Steps) {
			s := &r.Steps[st]
			gpu := s.GPUBusyUs / float64(max(len(p.ix.devices), 1))
			// A rank that waits for its peers (peer_wait) spends what its
			// host gains waiting longer: the peer sets the step.
			v = max(v, pipelineSavingUs(hostUs(st), gpu, blocked[st], 0)-LedgerUs(s.Ledger, LinePeerWait))
			if stepUs != nil {
				v = min(v, max(stepUs(st)-gpu, 0))
			}
		}
		total += v
	}
	return total
}

func hostSyncFix(t *trace.Trace, where string) string {
	if cudaC(t) {
		return fmt.Sprintf("remove the syncs at %s: use cuMemcpyAsync from pinned (cuMemHostAlloc) buffers on a stream and synchronize once per step, "+
			"or record an event and wait on it only where the host needs the result", where)
	}
	return fmt.Sprintf("remove the syncs at %s: keep values on the GPU (accumulate losses as tensors and call .item() once every N steps or after the loop), "+
		"copy host→device with pin_memory() and non_blocking=True, avoid data-dependent shapes (nonzero, boolean masks) inside the step; "+
		"torch.cuda.set_sync_debug_mode(\"warn\") points at each one", where)
}

// excludedSyncs tells which blocking calls host-sync left out and why.
func excludedSyncs(excluded map[string]int, order []string) []Evidence {
	if len(order) == 0 {
		return nil
	}
	parts := make([]string, 0, len(order))
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%d× %s", excluded[k], k))
	}
	return []Evidence{{Text: "not counted: " + strings.Join(parts, "; ")}}
}

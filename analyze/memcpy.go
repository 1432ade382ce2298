package analyze

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// Thresholds of host-sync, pageable-memcpy and small-memcpy.
const (
	// HostSyncMinPerStep is how many implicit or mid-step blocking syncs a
	// step must have for host-sync to report them.
	HostSyncMinPerStep = 1
	// PageableMinBytes is the size from which a pageable copy is worth
	// pinning (smaller ones are small-memcpy's business).
	PageableMinBytes = 64 << 10
	// SmallMemcpyBytes is the size under which a host↔device copy is
	// tiny: its cost is the call and the sync, not the bytes.
	SmallMemcpyBytes = 64 << 10
	// SmallMemcpyMinPerStep is how many tiny copies a step must have for
	// small-memcpy to report them.
	SmallMemcpyMinPerStep = 3
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
		"the GPU's queue full); in a step whose host work is the longer, at least the host time blocked in them (the host's wait delays all "+
		"the host work after it).", HostSyncMinPerStep),
	Requires: []*Analyzer{Steps, Launches, Attribution, IdleGaps, Phases, ProfilerClock},
	Run:      runHostSync,
}

// PageableMemcpy finds host↔device copies from pageable memory.
var PageableMemcpy = &Analyzer{
	Name: "pageable-memcpy",
	Doc: fmt.Sprintf("Finds host↔device memcpys of at least %s whose host side is pageable memory: the driver stages them through a "+
		"pinned buffer and the copy cannot overlap with the host (PyTorch also synchronises the stream after a pageable copy). "+
		"Saving model: the host time blocked in those copies' API calls and the syncs in the same op, per step, which pinned memory with "+
		"non_blocking=True removes.", FormatBytes(PageableMinBytes)),
	Requires: []*Analyzer{Steps, Launches, Attribution, Phases, IdleGaps, ProfilerClock},
	Run:      runPageableMemcpy,
}

// SmallMemcpy finds many tiny host↔device copies.
var SmallMemcpy = &Analyzer{
	Name: "small-memcpy",
	Doc: fmt.Sprintf("Finds host↔device memcpys under %s, reported when a step makes at least %d (traces without ProfilerStep markers are skipped: a count per step needs steps): each costs an API call (and often a "+
		"sync) for a few bytes. Saving model: all but one copy's API and sync time per step, as if the values were batched into one "+
		"tensor (or kept on the device).", FormatBytes(SmallMemcpyBytes), SmallMemcpyMinPerStep),
	Requires: []*Analyzer{Steps, Launches, Attribution, Phases},
	Run:      runSmallMemcpy,
}

// syncSite groups blocking calls by the op and Python line behind them.
type syncSite struct {
	op, line string
	calls    int
	time     trace.Duration
}

// outerOp returns the outermost op around op i.
func (ix *index) outerOp(i trace.Index) trace.Index {
	for i != trace.None && ix.t.Ops[i].Parent != trace.None {
		i = ix.t.Ops[i].Parent
	}
	return i
}

// hostSyncs is what scanHostSyncs found: the counted blocking calls by
// site, their cost to the traced step and to the untraced program, and
// the calls left out with why.
type hostSyncs struct {
	sites map[string]*syncSite
	order []string
	total trace.Duration
	// untraced and hostIn are, per step, the calls' cost to the untraced
	// program (syncCostUntraced) and the host time in them, µs; nil
	// without a profiler clock.
	untraced, hostIn []float64
	clock            *profilerClock
	count            int
	excluded         map[string]int
	exOrder          []string
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
	saving := us(total) / steps
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
			{Text: "saving model: per step, host time blocked in these syncs while the GPU idled, plus the GPU's idle time after each until the host had launched more work (at most the GPU work the sync waited for, which the host's next work would have overlapped); without them the host runs ahead and the GPU's queue stays full. Untraced: the same with the profiler's own host work taken out of the refill and of the host's run-up to each sync (a host that reaches the sync sooner waits longer for a GPU that was ahead); in a step whose untraced host work outlasts its GPU work, at least the host time blocked in the syncs, which delays all the host work after them"},
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
	h := &hostSyncs{sites: map[string]*syncSite{}, excluded: map[string]int{}, clock: clock}
	if clock != nil {
		h.untraced, h.hostIn = make([]float64, len(t.Steps)), make([]float64, len(t.Steps))
	}
	for i := range t.APICalls {
		c := &t.APICalls[i]
		st := ix.apiStep[i]
		if !isSyncCall(c.Name) || st < 0 {
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
			k := where + ": " + why
			if h.excluded[k] == 0 {
				h.exOrder = append(h.exOrder, k)
			}
			h.excluded[k]++
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
		// refill after it, cost the step.
		blocked := ix.syncCost(c.Span)
		if clock != nil {
			h.untraced[st] += ix.syncCostUntraced(clock, c.Span, runUp[st])
			h.hostIn[st] += us(c.Dur())
			runUp[st] = max(runUp[st], c.End)
		}
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
	return h
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
	t, r := p.Trace, p.Result
	var total float64
	for st := range h.untraced {
		v := h.untraced[st]
		if len(r.Steps) == len(t.Steps) {
			gpu := r.Steps[st].GPUBusyUs / float64(max(len(p.ix.devices), 1))
			v = max(v, pipelineSavingUs(h.clock.untracedHostUs(t, r, st), gpu, h.hostIn[st], 0))
		}
		total += v
	}
	return total
}

// copyStat aggregates memcpys that share a direction and memory kinds.
type copyStat struct {
	kind        string
	calls       int
	bytes       int64
	gpu, host   trace.Duration
	lines       []string
	sizeExample int64
}

// hostCopies walks host↔device memcpys that pass keep, returning one row
// per direction/memory kind with the host time blocked in their API calls
// and the syncs of the ops that issued them.
func (p *Pass) hostCopies(keep func(*trace.GPUActivity) bool) ([]*copyStat, int, trace.Duration) {
	t, ix := p.Trace, p.ix
	// A copy blocks the host in its API call and in the syncs of the same
	// op; those overlap (the sync often waits on the copy itself), so
	// blocked time is the union of their intervals, clipped to the step
	// the call is in (the trace without one).
	syncSpans := map[trace.Index][]trace.Span{}
	for i := range t.APICalls {
		if c := &t.APICalls[i]; ix.sync[i] && c.Op != trace.None {
			syncSpans[c.Op] = append(syncSpans[c.Op], c.Span)
		}
	}
	seenOp := map[trace.Index]bool{}
	statSpans := map[string][]trace.Span{}
	var all []trace.Span
	stats := map[string]*copyStat{}
	var order []string
	n := 0
	whole := ix.whole
	for g := range t.GPU {
		a := &t.GPU[g]
		if a.Kind != trace.Memcpy || (a.Copy != trace.HtoD && a.Copy != trace.DtoH) || !keep(a) || ix.autotune != nil && ix.autotune[g] {
			continue
		}
		kind := fmt.Sprintf("%s (%s → %s)", a.Copy, a.Src, a.Dst)
		s := stats[kind]
		if s == nil {
			s = &copyStat{kind: kind, sizeExample: a.Bytes}
			stats[kind] = s
			order = append(order, kind)
		}
		s.calls++
		s.bytes += a.Bytes
		s.gpu += a.Dur()
		if a.Launch != trace.None {
			c := &t.APICalls[a.Launch]
			w := whole
			if st := ix.apiStep[a.Launch]; st >= 0 {
				w = trace.Span{Start: t.Steps[st].Start, End: t.Steps[st].End}
			}
			spans := []trace.Span{c.Span}
			if c.Op != trace.None && !seenOp[c.Op] {
				seenOp[c.Op] = true
				spans = append(spans, syncSpans[c.Op]...)
			}
			for _, sp := range spans {
				sp.Start, sp.End = max(sp.Start, w.Start), min(sp.End, w.End)
				if sp.End > sp.Start {
					statSpans[kind] = append(statSpans[kind], sp)
					all = append(all, sp)
				}
			}
		}
		if l := ix.userLine(g); l != "" && !slices.Contains(s.lines, l) && len(s.lines) < MaxAttribution {
			s.lines = append(s.lines, l)
		}
		n++
	}
	out := make([]*copyStat, 0, len(order))
	for _, k := range order {
		stats[k].host = mergeSpans(statSpans[k])
		out = append(out, stats[k])
	}
	return out, n, mergeSpans(all)
}

func copyTable(stats []*copyStat, steps float64) *Table {
	tb := NewTable(Col("copy", KindName), Col("count", KindCount), Col("per step", KindCount), Col("bytes", KindBytes),
		Col("GPU", KindDuration), Col("host blocked", KindDuration), Col("python", KindSource))
	for _, s := range stats {
		tb.Add(NameCell(s.kind), Count(float64(s.calls)), Count(math.Round(float64(s.calls)/steps*10)/10), Bytes(float64(s.bytes)),
			Dur(s.gpu), Dur(s.host), SourceCell(strings.Join(s.lines, "; ")))
	}
	return tb
}

func copyLines(stats []*copyStat) string {
	var lines []string
	for _, s := range stats {
		for _, l := range s.lines {
			if !slices.Contains(lines, l) {
				lines = append(lines, l)
			}
		}
	}
	if len(lines) == 0 {
		return "the code that copies them"
	}
	return strings.Join(lines, "; ")
}

func runPageableMemcpy(p *Pass) ([]Finding, error) {
	stats, n, host := p.hostCopies(func(a *trace.GPUActivity) bool {
		return (a.Src == trace.Pageable || a.Dst == trace.Pageable) && a.Bytes >= PageableMinBytes
	})
	if n == 0 {
		return nil, nil
	}
	steps := float64(max(len(p.Trace.Steps), 1))
	var bytes int64
	var gpu trace.Duration
	for _, s := range stats {
		bytes += s.bytes
		gpu += s.gpu
	}
	link, linkName := hostLinkGBps(p.Result.Device)
	pinned := float64(bytes) / (link * 1e3) // µs: bytes / (GB/s × 1e3)
	// Pinning does not remove the copies: they still cross the host link,
	// at its rate instead of the staged pageable rate. The step saves the
	// copies' GPU time above that (and no more than the host blocked).
	saving := max(min(us(gpu), us(host))-pinned, 0) / steps
	// Untraced, the fix saves what the step's pipeline gains: the host no
	// longer blocks in the copies, and the GPU copies at the pinned rate.
	clock, err := profilerClockOf(p)
	if err != nil {
		return nil, err
	}
	untraced := stepsUntracedPipelineUs(p.Trace, p.Result, clock, len(p.ix.devices), us(host)/steps, max(us(gpu)-pinned, 0)/steps)
	return []Finding{{
		Title:            fmt.Sprintf("%d pageable host↔GPU copies (%s, %.1f per step) block the host %s", n, FormatBytes(float64(bytes)), float64(n)/steps, host),
		Subject:          "pageable copies",
		Severity:         severityByShare(p.shareOfStep(saving)),
		SavingUs:         saving,
		UntracedSavingUs: untraced,
		SavingFrom:       FromKernelTime,
		Measures: []Measure{
			{"copies", Count(float64(n))},
			{"bytes copied", Bytes(float64(bytes))},
			{"host blocked", Dur(host)},
		},
		Evidence: []Evidence{
			{Text: "host↔device copies whose host side is pageable (staged by the driver, synchronous for the host):", Table: copyTable(stats, steps)},
			{Text: fmt.Sprintf("copies' GPU time %s at %s; from pinned memory the same bytes take %s at the %s peak of %.0f GB/s",
				us2(us(gpu)), bandwidth(float64(bytes), us(gpu)), us2(pinned), linkName, link)},
			{Text: "saving model: the copies' GPU time (at most the host time blocked in their API calls and the syncs of the same op, as a union of intervals in the step) less their time from pinned memory at the host link's peak, per step; pinned memory with non_blocking=True also lets the host run ahead. Untraced: each steady step takes the longer of its host work (less the profiler's) and its GPU work, before and after the fix, which takes the blocked host time out of the first and the copies' time above the pinned rate out of the second"},
		},
		Fix:        pageableFix(p.Trace, copyLines(stats)),
		Confidence: High,
	}}, nil
}

func runSmallMemcpy(p *Pass) ([]Finding, error) {
	stats, n, host := p.hostCopies(func(a *trace.GPUActivity) bool { return a.Bytes < SmallMemcpyBytes })
	steps := float64(max(len(p.Trace.Steps), 1))
	if n == 0 || float64(n)/steps < SmallMemcpyMinPerStep || p.Result.Summary.StepsSynthetic {
		return nil, nil
	}
	saving := us(host) / steps * (1 - 1/(float64(n)/steps))
	return []Finding{{
		Title:      fmt.Sprintf("%.0f tiny host↔device copies per step (under %s each), %s of host time blocked", float64(n)/steps, FormatBytes(SmallMemcpyBytes), host),
		Subject:    "small copies",
		Severity:   severityByShare(p.shareOfStep(saving)),
		SavingUs:   saving,
		SavingFrom: FromGPUIdle,
		Measures: []Measure{
			{"copies per step", Count(float64(n) / steps)},
			{"host blocked", Dur(host)},
		},
		Evidence: []Evidence{
			{Text: "small copies by direction and memory kind:", Table: copyTable(stats, steps)},
			{Text: "saving model: all but one copy's API and sync time per step, as if batched into one transfer"},
		},
		Fix: fmt.Sprintf("batch the small values at %s into one tensor per step (torch.stack/cat on the host, one pinned non_blocking copy), "+
			"create constants directly on the device (torch.ones(..., device=\"cuda\"), torch.tensor(x, device=\"cuda\")), and read results back once, not per value",
			copyLines(stats)),
		Confidence: Medium,
	}}, nil
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

func pageableFix(t *trace.Trace, where string) string {
	if cudaC(t) {
		return fmt.Sprintf("allocate the host buffers (%s) with cuMemHostAlloc/cudaHostAlloc (or cuMemHostRegister existing ones) and copy with cuMemcpyHtoDAsync on a stream", where)
	}
	return fmt.Sprintf("pin the host tensors and copy asynchronously at %s: tensor.pin_memory().to(device, non_blocking=True), or DataLoader(pin_memory=True) "+
		"and .to(device, non_blocking=True) on its batches", where)
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

// hostLinkGBps returns the peak host↔device bandwidth of device per
// direction (GB/s) and the link's name: PCIe 5.0 x16 on Hopper and
// Blackwell, 4.0 on Ampere and Ada, 3.0 before; 4.0 when unknown.
func hostLinkGBps(device string) (float64, string) {
	d := strings.ToUpper(device)
	for _, g := range []struct {
		names []string
		gbps  float64
		link  string
	}{
		{[]string{"H100", "H200", "H800", "H20", "GH200", "B100", "B200", "GB200", "RTX PRO 6000", "RTX 50"}, 64, "PCIe 5.0 x16"},
		{[]string{"V100", "T4", "P100", "RTX 20", "TITAN"}, 16, "PCIe 3.0 x16"},
	} {
		for _, n := range g.names {
			if strings.Contains(d, n) {
				return g.gbps, g.link
			}
		}
	}
	return 32, "PCIe 4.0 x16"
}

// us2 formats µs for evidence text.
func us2(v float64) string { return FormatUs(v) }

// bandwidth formats bytes moved in µs as GB/s.
func bandwidth(bytes, usec float64) string {
	if usec <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f GB/s", bytes/(usec*1e3))
}

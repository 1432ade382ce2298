package analyze

import (
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

// outerOp returns the outermost op around op i.
func (ix *index) outerOp(i trace.Index) trace.Index {
	for i != trace.None && ix.t.Ops[i].Parent != trace.None {
		i = ix.t.Ops[i].Parent
	}
	return i
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
	// the call is in (the trace without one). The syncs are gathered on
	// the first copy that needs them (a walk over every API call; most
	// traces make no copy).
	var syncSpans map[trace.Index][]trace.Span
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
				if syncSpans == nil {
					syncSpans = opSyncSpans(t, ix)
				}
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

// opSyncSpans returns the blocking syncs (Launches) of each op.
func opSyncSpans(t *trace.Trace, ix *index) map[trace.Index][]trace.Span {
	syncSpans := map[trace.Index][]trace.Span{}
	for i := range t.APICalls {
		if c := &t.APICalls[i]; ix.sync[i] && c.Op != trace.None {
			syncSpans[c.Op] = append(syncSpans[c.Op], c.Span)
		}
	}
	return syncSpans
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

func pageableFix(t *trace.Trace, where string) string {
	if cudaC(t) {
		return fmt.Sprintf("allocate the host buffers (%s) with cuMemHostAlloc/cudaHostAlloc (or cuMemHostRegister existing ones) and copy with cuMemcpyHtoDAsync on a stream", where)
	}
	return fmt.Sprintf("pin the host tensors and copy asynchronously at %s: tensor.pin_memory().to(device, non_blocking=True), or DataLoader(pin_memory=True) "+
		"and .to(device, non_blocking=True) on its batches", where)
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

package distributed

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/trace"
)

// Finding is an analyze.Finding about a run, with the ranks it concerns.
type Finding struct {
	analyze.Finding
	// Ranks are the global ranks the finding is about (the straggler; the
	// ranks whose communication is exposed).
	Ranks []int `json:"ranks"`
}

// What a cross-rank finding's saving comes out of (Finding.SavingFrom):
// the other ranks' waiting, communication no compute hides, and slow
// transfers. Savings from one part overlap.
const (
	FromCollectiveWait = "collective wait"
	FromExposedComm    = "exposed communication"
	FromCommTransfer   = "communication transfer"
)

// Finding ids.
const (
	IDStraggler     = "straggler"
	IDExposedComm   = "exposed-comm"
	IDCommBandwidth = "comm-bandwidth"
)

// Thresholds for reporting: below them a figure is noise or not worth a
// user's time.
const (
	exposedShare   = 0.05 // exposed transfer per step over the step
	exposedMin     = 100_000
	bandwidthShare = 0.05 // time lost to slow collectives per step over the step
	// slowFactor: a collective is slow when its transfer takes more than
	// this times the expected time at the link's achievable bandwidth.
	slowFactor = 2
)

// findStraggler builds the straggler finding from a candidate and its
// explanation (nil when the two traces could not be read again).
func (run *Run) findStraggler(sc StragglerCandidate, ex *Explanation) Finding {
	r := run.Ranks[sc.Index].Rank
	kind := run.lateKind(sc.Index)
	f := Finding{Ranks: []int{r}}
	f.ID, f.Subject, f.SavingFrom = IDStraggler, fmt.Sprintf("rank %d", r), FromCollectiveWait
	// The others gain at most the wait their own compute does not hide:
	// their own work still runs after the fix.
	bound, host := run.gainBounds(sc.Index)
	saving := capAt(min(sc.Late, bound), sc.Step)
	f.Measures = []analyze.Measure{{Name: "late per step", Value: analyze.Dur(sc.Late)},
		{Name: "others can gain per step", Value: analyze.Dur(bound)}, {Name: "median step", Value: analyze.Dur(sc.Step)},
		{Name: "share of all late time", Value: analyze.Percent(sc.LateShare)}}
	f.Severity = analyze.Medium
	if sc.Step > 0 && float64(saving) >= 0.25*float64(sc.Step) {
		f.Severity = analyze.High
	}
	f.SavingUs, f.SavingNs = saving.Micros(), int64(saving)
	if sc.Step > 0 {
		f.Share = min(float64(saving)/float64(sc.Step), 1)
	}
	f.Confidence = analyze.High
	f.Title = truncate(fmt.Sprintf("Rank %d makes the other ranks wait %s per step at the %s", r, sc.Late, kind), 100)
	arrives := fmt.Sprintf("rank %d arrives last, %s per step after the median of the other ranks (median step %s): %.0f%% of all late arrivals' time in the run",
		r, sc.Late, sc.Step, 100*sc.LateShare)
	if sc.Cascade {
		arrives += fmt.Sprintf("; the rest cascades from it: rank %d waits %s in all its collectives while late %s, and a rank that waited for it arrives late at its next collective in another group",
			r, run.Stats[sc.Index].Wait, sc.Late*trace.Duration(sc.Steps))
	}
	model := fmt.Sprintf("saving model: the other ranks gain at most their wait for rank %d that their own compute does not hide (the rest of their step is their own work, which still runs after the fix): %s per step (median over the waiting ranks), against %s of lateness",
		r, bound, sc.Late)
	if host.Index >= 0 {
		model = fmt.Sprintf("saving model: the other ranks gain at most their wait for rank %d that their own compute does not hide, and the ranks move in lockstep: rank %d's host works %s of each %s step outside its syncs, so the step cannot shrink by more than %s (against %s of lateness)",
			r, run.Ranks[host.Index].Rank, host.Host, host.Host+host.Slack, host.Slack, sc.Late)
	}
	f.Evidence = append(f.Evidence, analyze.Evidence{Text: arrives}, analyze.Evidence{Text: model})
	if ex == nil {
		f.Confidence = analyze.Medium
		f.Fix = fmt.Sprintf("Profile rank %d's work before the %s: it reaches it late every step.", r, kind)
		return f
	}
	f.Evidence = append(f.Evidence, analyze.Evidence{Text: ex.Sentence(kind)})
	t := analyze.NewTable(analyze.Col("what", analyze.KindName), analyze.Col("name", analyze.KindName),
		analyze.Col(fmt.Sprintf("rank %d per step", ex.Straggler), analyze.KindDuration), analyze.Col(fmt.Sprintf("rank %d per step", ex.Reference), analyze.KindDuration),
		analyze.Col("difference", analyze.KindDuration))
	row := func(what, name string, a, b trace.Duration) {
		t.Add(analyze.NameCell(what), analyze.NameCell(name), analyze.Dur(a), analyze.Dur(b), analyze.Dur(a-b))
	}
	row("window", "before the collectives", ex.Window[0], ex.Window[1])
	row("GPU busy", "compute kernels, copies", ex.GPUBusy[0], ex.GPUBusy[1])
	row("GPU idle", "", ex.GPUIdle[0], ex.GPUIdle[1])
	row("compute", "whole step, not only the windows", ex.Compute[0], ex.Compute[1])
	for _, d := range ex.Differences[:min(len(ex.Differences), 8)] {
		row(d.What, d.Name, d.Straggler, d.Reference)
	}
	f.Evidence = append(f.Evidence, analyze.Evidence{Text: fmt.Sprintf("per step, over the windows before the %d collectives rank %d was last at (GPU: from its previous collective's end to its arrival; host: from the previous collective's launch to this one's):", ex.Windows, ex.Straggler), Table: t})
	switch ex.Kind {
	case HostStraggler:
		f.Fix = hostFix(ex)
	case ComputeStraggler:
		f.Fix = fmt.Sprintf("Rank %d does more GPU work than the others before the collective: balance the work across ranks (uneven batch or sequence lengths, extra per-rank computation such as metrics or EMA on one rank).", ex.Straggler)
	default:
		f.Fix = fmt.Sprintf("Compare rank %d's steps with rank %d's (tracelens diff on the two rank files): the difference is spread over host and GPU.", ex.Straggler, ex.Reference)
		f.Confidence = analyze.Medium
	}
	return f
}

// lateKind is the most common collective kind among those rank index s
// arrived at last.
func (run *Run) lateKind(s int) string {
	count := map[string]int{}
	for ci := range run.Collectives {
		c := &run.Collectives[ci]
		if l, ok := c.lateArrival(); ok && c.Participants[l] == s {
			count[c.Kind]++
		}
	}
	best := ""
	for k, n := range count {
		if best == "" || n > count[best] || n == count[best] && k < best {
			best = k
		}
	}
	if best == "" {
		return "collectives"
	}
	return strings.ReplaceAll(best, "_", "-")
}

// findExposed reports, per parallelism dimension, communication that no
// compute hides and that is not waiting for a late rank.
func (run *Run) findExposed(step trace.Duration, steps int) []Finding {
	var out []Finding
	for _, d := range run.Dimensions {
		if d.Ranks == 0 {
			continue
		}
		per := d.ExposedTransfer / trace.Duration(d.Ranks*max(steps, 1))
		if per < exposedMin || step > 0 && float64(per) < exposedShare*float64(step) {
			continue
		}
		f := Finding{}
		for _, s := range run.Stats {
			if s.ExposedTransfer > 0 {
				f.Ranks = append(f.Ranks, s.Rank)
			}
		}
		f.ID, f.Subject, f.SavingFrom = IDExposedComm, "dimension "+d.Dimension, FromExposedComm
		f.Measures = []analyze.Measure{{Name: "exposed transfer per rank per step", Value: analyze.Dur(per)}, {Name: "communication kernels", Value: analyze.Dur(d.CommKernel)},
			{Name: "exposed", Value: analyze.Dur(d.Exposed)}, {Name: "waiting", Value: analyze.Dur(d.Exposed - d.ExposedTransfer)}}
		saving := capAt(per, step)
		f.SavingUs, f.SavingNs = saving.Micros(), int64(saving)
		if step > 0 {
			f.Share = min(float64(per)/float64(step), 1)
		}
		f.Severity = analyze.Medium
		if f.Share >= 0.2 {
			f.Severity = analyze.High
		}
		f.Confidence = analyze.High
		kinds := strings.ReplaceAll(strings.Join(d.Kinds, ", "), "_", "-")
		f.Title = truncate(fmt.Sprintf("%s communication (%s) is exposed %s per step on each rank", dimWord(d.Dimension), kinds, per), 100)
		ovl := 0.0
		if d.CommKernel > 0 {
			ovl = 100 * (1 - float64(d.Exposed)/float64(d.CommKernel))
		}
		f.Evidence = append(f.Evidence, analyze.Evidence{Text: fmt.Sprintf(
			"%d collectives in groups %s over %d ranks: communication kernels %s, %.0f%% under compute; exposed %s, of which %s is waiting for a later rank and %s is data moving with no compute to hide it (per rank per step: %s)",
			d.Collectives, strings.Join(d.Groups, ", "), d.Ranks, d.CommKernel, ovl, d.Exposed, d.Exposed-d.ExposedTransfer, d.ExposedTransfer, per)})
		f.Fix = exposedFix(d)
		out = append(out, f)
	}
	return out
}

func dimWord(d string) string {
	switch d {
	case "default":
		return "Default-group"
	case "dp", "tp", "pp", "cp", "ep", "sp", "fsdp", "hsdp":
		return strings.ToUpper(d)
	}
	return "Group " + d
}

// exposedFix names the fix that fits the dimension's collectives.
func exposedFix(d DimensionStats) string {
	var fixes []string
	sharded := slices.Contains(d.Kinds, AllGather) || slices.Contains(d.Kinds, ReduceScatter)
	if d.Dimension == "tp" || d.Dimension == "sp" {
		fixes = append(fixes, "tensor-parallel collectives sit between dependent matmuls: overlap them with async tensor parallelism (torch.distributed._symmetric_memory / micro-pipelining) or use fewer TP ranks per model replica")
	} else if sharded {
		fixes = append(fixes, "FSDP: prefetch the next all-gather while the current layer computes (FSDP2 `set_modules_to_forward_prefetch` / `set_modules_to_backward_prefetch`; FSDP1 `forward_prefetch=True`, `backward_prefetch=BackwardPrefetch.BACKWARD_PRE`), and keep the last blocks unsharded after forward (`reshard_after_forward=False`) to skip their backward all-gather at the cost of memory")
	}
	if slices.Contains(d.Kinds, AllReduce) && d.Dimension != "tp" && d.Dimension != "sp" {
		fixes = append(fixes, "DDP: let gradient all-reduce start earlier in backward with smaller buckets (`bucket_cap_mb`), avoid the bucket copy with `gradient_as_bucket_view=True`, and with gradient accumulation skip the all-reduce of non-final micro-steps with `no_sync()`")
	}
	if slices.Contains(d.Kinds, SendRecv) {
		fixes = append(fixes, "pipeline sends and recvs: overlap them with the stage's compute (a schedule that does, such as torch.distributed.pipelining's ScheduleInterleaved1F1B or ScheduleZBVZeroBubble, or the send of one micro-batch beside the next one's forward)")
	}
	if d.Collectives > 0 && d.Bytes/int64(d.Collectives) < 1<<20 {
		fixes = append(fixes, "the collectives are small (latency-bound): issue fewer, larger ones (bucketing, coalescing)")
	}
	if len(fixes) == 0 {
		fixes = append(fixes, "overlap the collectives with independent compute (issue them earlier on a separate stream) or make them fewer and larger")
	}
	return strings.Join(fixes, "; ") + "."
}

// LinkBandwidth is the per-GPU, per-direction bandwidth of the fastest
// link between GPUs of one host for a device name (NVLink for SXM parts,
// PCIe otherwise), in bytes per second; 0 when unknown. Datasheet figures.
func LinkBandwidth(device string) (float64, string) {
	d := strings.ToUpper(device)
	switch {
	case strings.Contains(d, "B200"), strings.Contains(d, "GB200"), strings.Contains(d, "B100"):
		return 900e9, "NVLink 5 (900 GB/s per direction)"
	case strings.Contains(d, "H100") && strings.Contains(d, "PCIE"):
		return 64e9, "PCIe 5.0 x16 (64 GB/s per direction)"
	case strings.Contains(d, "H100"), strings.Contains(d, "H200"), strings.Contains(d, "H800"), strings.Contains(d, "GH200"):
		return 450e9, "NVLink 4 (450 GB/s per direction)"
	case strings.Contains(d, "A100") && strings.Contains(d, "PCIE"):
		return 32e9, "PCIe 4.0 x16 (32 GB/s per direction)"
	case strings.Contains(d, "A100"), strings.Contains(d, "A800"):
		return 300e9, "NVLink 3 (300 GB/s per direction)"
	case strings.Contains(d, "MI300"), strings.Contains(d, "MI325"):
		return 448e9, "Infinity Fabric (7 × 64 GB/s)"
	case strings.Contains(d, "L4"), strings.Contains(d, "L40"), strings.Contains(d, "A10"), strings.Contains(d, "RTX"):
		return 32e9, "PCIe 4.0 x16 (32 GB/s per direction)"
	}
	return 0, ""
}

// Achievable share of the link's datasheet bandwidth for large messages
// (NCCL's bus bandwidth reaches ~80% on NVLink), and the fixed latency of a
// collective that makes small ones slower than bandwidth alone says.
const (
	achievable    = 0.8
	collectiveLat = 20_000 // ns
)

// findBandwidth reports collectives whose transfer is far slower than the
// link allows for their size.
func (run *Run) findBandwidth(step trace.Duration, steps int) []Finding {
	bw, link := LinkBandwidth(run.Ranks[0].Device)
	if bw == 0 {
		return nil
	}
	type agg struct {
		n, slow   int
		lost      trace.Duration
		busbw     []float64
		bytes     int64
		transfer  trace.Duration
		dimension string
		kind      string
	}
	byKey := map[string]*agg{}
	var keys []string
	for ci := range run.Collectives {
		c := &run.Collectives[ci]
		if c.Bytes == 0 {
			continue
		}
		n := len(c.Participants)
		bus := float64(c.Bytes) * BusFactor(c.Kind, n)
		expect := trace.Duration(collectiveLat + bus/(achievable*bw)*1e9)
		tr := c.Transfer()
		k := c.Dimension + "/" + c.Kind
		a := byKey[k]
		if a == nil {
			a = &agg{dimension: c.Dimension, kind: c.Kind}
			byKey[k] = a
			keys = append(keys, k)
		}
		a.n++
		a.bytes += c.Bytes
		a.transfer += tr
		if tr > 0 {
			a.busbw = append(a.busbw, bus/(float64(tr)/1e9))
		}
		if tr > slowFactor*expect {
			a.slow++
			a.lost += tr - expect
		}
	}
	slices.Sort(keys)
	var out []Finding
	for _, k := range keys {
		a := byKey[k]
		per := a.lost / trace.Duration(max(steps, 1))
		if a.slow == 0 || step > 0 && float64(per) < bandwidthShare*float64(step) {
			continue
		}
		slices.Sort(a.busbw)
		med := a.busbw[len(a.busbw)/2]
		f := Finding{}
		for _, s := range run.Stats {
			f.Ranks = append(f.Ranks, s.Rank)
		}
		f.ID, f.Subject, f.SavingFrom = IDCommBandwidth, a.dimension+" "+a.kind, FromCommTransfer
		f.Measures = []analyze.Measure{{Name: "median bus bandwidth", Value: analyze.Rate(med, "B/s")}, {Name: "link bandwidth", Value: analyze.Rate(bw, "B/s")},
			{Name: "time lost per step", Value: analyze.Dur(per)}}
		saving := capAt(per, step)
		f.SavingUs, f.SavingNs = saving.Micros(), int64(saving)
		if step > 0 {
			f.Share = min(float64(per)/float64(step), 1)
		}
		f.Severity, f.Confidence = analyze.Medium, analyze.Medium
		kind := strings.ReplaceAll(a.kind, "_", "-")
		f.Title = truncate(fmt.Sprintf("%s %s runs at %.0f GB/s bus bandwidth, %.0f%% of the link", dimWord(a.dimension), kind, med/1e9, 100*med/bw), 100)
		f.Evidence = append(f.Evidence, analyze.Evidence{Text: fmt.Sprintf(
			"%d of %d %s collectives (%s each on average) take over %d× the time the link allows (bus bytes at %.0f%% of %s, plus %s latency); median bus bandwidth %.0f GB/s (NCCL factor %.2f); %s lost per step. Assumes the ranks share a host connected by that link.",
			a.slow, a.n, kind, byteSize(a.bytes/int64(a.n)), slowFactor, 100*achievable, link, trace.Duration(collectiveLat), med/1e9, BusFactor(a.kind, len(run.Ranks)), per)})
		f.Fix = "Check NCCL's choice of transport and protocol (NCCL_DEBUG=INFO: a P2P/SHM fallback instead of NVLink, or the LL protocol on large messages), that the GPUs are connected as assumed (nvidia-smi topo -m), and that the message is not split into many small calls."
		out = append(out, f)
	}
	return out
}

// capAt bounds a saving per step by the step (when known): no fix saves
// more than the step takes.
func capAt(saving, step trace.Duration) trace.Duration {
	if step > 0 {
		return min(saving, step)
	}
	return saving
}

func byteSize(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

package report

import (
	"fmt"
	"slices"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/distributed"
	"github.com/tracelens/tracelens/trace"
)

// summary writes the executive summary: the biggest findings first, as a
// hand-written investigation leads, then the utilisation, where GPU time
// goes, and notes on the trace itself (at most maxBullets).
func (d *doc) summary(t *trace.Trace, r *analyze.Result) {
	bullets := leadingFindings(r)
	bullets = append(bullets, utilisationBullets(t, r)...)
	if b, ok := categoryBullet(r); ok {
		bullets = append(bullets, b)
	}
	bullets = append(bullets, traceBullets(r)...)
	if len(bullets) > maxBullets {
		bullets = bullets[:maxBullets]
	}
	for _, b := range bullets {
		d.b.WriteString("- " + b + "\n")
	}
	d.b.WriteString("\n")
}

// leadingFindings are the two biggest estimated findings, each with its
// saving.
func leadingFindings(r *analyze.Result) []string {
	var bullets []string
	shown := 0
	for _, f := range r.Findings {
		if shown == 2 {
			break
		}
		if !estimated(f) {
			continue
		}
		shown++
		bullets = append(bullets, fmt.Sprintf("**%s**: saves %s.", upperFirst(Text(f.Title)), savingText(r, f)))
	}
	return bullets
}

// utilisationBullets say what the step is bound by (no GPU, a peer rank,
// the host, communication or the GPU), from the steady step's medians.
func utilisationBullets(t *trace.Trace, r *analyze.Result) []string {
	var bullets []string
	per := "each step"
	if r.Summary.StepsSynthetic {
		per = "the trace (no step markers)"
	}
	wall, busy, launches, launchAPI := typical(r)
	switch {
	case !hasGPU(r):
		s := fmt.Sprintf("**No GPU activity recorded**: the trace holds %s and %s over %s but no kernel, memcpy or memset, so this report covers CPU time only.",
			plural(len(t.Ops), "CPU op"), plural(len(t.Frames), "Python frame"), us(r.Summary.WallUs))
		if torch(r) {
			s += " Record with `ProfilerActivity.CUDA` to see the GPU."
		}
		bullets = append(bullets, s)
		if len(r.Ops) > 0 {
			o := r.Ops[0]
			bullets = append(bullets, fmt.Sprintf("**%s takes the most CPU time**: %s over %s (%s self).", Code(o.Name), us(o.TotalCPUUs), plural(o.Calls, "call"), us(o.SelfCPUUs)))
		}
	case r.StepStats.Bottleneck == analyze.BottleneckPeer:
		// A rank of a run: its step is the slowest rank's; its own work
		// is not what to shorten first.
		ss := r.StepStats
		wait := analyze.LedgerUs(ss.SteadyLedger, analyze.LinePeerWait)
		bullets = append(bullets, fmt.Sprintf("**This rank waits for a peer rank %s of %s**: wall %s, GPU busy %s (%s). Its step is the slowest rank's: the cross-rank findings say which rank and why.",
			pct(wait/wall), per, us(wall), us(busy), pct(ss.SteadyGPUBusyShare)))
	case r.StepStats.Bottleneck == analyze.BottleneckHost:
		// One statistic throughout: the steady step's medians and their
		// ratios, so the launches times each one's cost is the total.
		ss := r.StepStats
		s := fmt.Sprintf("**GPU idle %s of %s**: wall %s, GPU busy %s. The host is the bottleneck: %s launches taking %s of CPU in launch calls (%s each) for kernels averaging %s",
			pct(ss.SteadyGPUIdleShare), per, us(wall), us(busy), count(launches), us(launchAPI), us(ss.SteadyLaunchAPIPerLaunchUs), us(ss.SteadyKernelMeanUs))
		if ss := r.StepStats; ss.SteadyGPUIdleUs > 0 && ss.SteadyLaunchAPIIdleShare < 0.5 {
			s += fmt.Sprintf("; launch calls explain only %s of the %s idle, the rest is host work between launches (Python, framework overhead, compilation, synchronisation)", pct(ss.SteadyLaunchAPIIdleShare), us(ss.SteadyGPUIdleUs))
		}
		bullets = append(bullets, s+".")
	case wall > 0 && r.Summary.CommunicationUs > 0:
		bullets = append(bullets, busyWithCommunication(r, per, wall, busy))
	case wall > 0:
		bullets = append(bullets, fmt.Sprintf("**GPU busy %s of %s** (wall %s, GPU busy %s): the GPU is the bottleneck, so the kernels below are where time goes.",
			pct(r.StepStats.SteadyGPUBusyShare), per, us(wall), us(busy)))
	}
	return bullets
}

// categoryBullet says which kernel category takes the step's GPU time
// (per steady step when the trace has steps) and its top kernel.
func categoryBullet(r *analyze.Result) (string, bool) {
	if sc := r.StepStats.SteadyCategories; len(sc) > 0 && len(r.Kernels) > 0 && !r.Summary.StepsSynthetic {
		// Per step, as every other figure of the summary: compilation,
		// autotuning and the first step's warm-up are not the workload.
		c := sc[0]
		s := fmt.Sprintf("**%s kernels take %s of the step's GPU time** (%s per step)", upperFirst(categoryTitle(c.Category)), pct(c.Share), us(c.Us))
		if wait := analyze.LedgerUs(r.StepStats.SteadyLedger, analyze.LinePeerWait); wait > 0 && c.Category == analyze.CategoryCommunication {
			// A rank of a run: much of that is NCCL spinning for a peer.
			s += fmt.Sprintf(", %s of it with nothing else on the GPU, only waiting for a peer rank", us(wait))
		}
		if k, per, n := steadyTopKernel(r, c.Category); per > 0 {
			s += fmt.Sprintf("; the top kernel %s takes %s of it (%s per step in %s)", Code(shorten(kernelName(k), 60)), pct(per/steadyGPUUs(sc)), us(per), plural(int(n+0.5), "launch"))
			s += launchedBy(k)
		}
		return s + ".", true
	} else if len(r.Categories) > 0 && len(r.Kernels) > 0 {
		c, k := r.Categories[0], r.Kernels[0]
		s := fmt.Sprintf("**%s kernels take %s of GPU time** (%s of %s); the top kernel %s alone takes %s of kernel time (%s, mean %s)",
			upperFirst(categoryTitle(c.Category)), pct(c.Share), us(c.TotalUs), us(r.Summary.GPUActivityUs), Code(shorten(kernelName(k), 60)), pct(k.Share), plural(k.Count, "launch"), us(k.MeanUs))
		return s + launchedBy(k) + ".", true
	}
	return "", false
}

// traceBullets are notes on the trace: a slow first step, the roofline's
// headline, the costliest range, no finding, no step markers.
func traceBullets(r *analyze.Result) []string {
	var bullets []string
	// A cold-start finding already leads with the first step's cost.
	if s := r.StepStats; s.WarmUp && coldStartFinding(r) == "" {
		bullets = append(bullets, fmt.Sprintf("**The first step takes %s, %.1f× the median of the others** (%s): warm-up (allocator growth, library handles, compilation); leave it out when timing.",
			us(s.FirstStepUs), s.FirstStepRatio, us(s.MedianWallUsNoFirst)))
	}
	if same := sameShape(r.SameWork); len(same) > 0 {
		// Two implementations of one GEMM far apart is the roofline's
		// headline (a library kernel against a hand-written one).
		bullets = append(bullets, same[0])
	} else if row, ok := heaviestRoofline(r.Roofline); ok {
		bullets = append(bullets, rooflineHeadline(row))
	}
	if b, ok := costliestRange(r); ok {
		bullets = append(bullets, b)
	}
	if len(r.Findings) == 0 && hasGPU(r) {
		bullets = append(bullets, fmt.Sprintf("**No finding**: none of the %s analyzers found a problem worth fixing in this trace.", count(float64(len(r.Analyzers)))))
	}
	if r.Summary.StepsSynthetic && hasGPU(r) {
		hint := "call `prof.step()` each iteration"
		if !torch(r) {
			hint = "mark each iteration (`jax.profiler.StepTraceAnnotation` in JAX)"
		}
		bullets = append(bullets, "**No step markers**: the whole trace counts as one step, so per-step figures are per trace; "+hint+" for per-step numbers.")
	}
	return bullets
}

// maxBullets keeps the executive summary to what a reader takes in at once.
const maxBullets = 6

// torch reports whether the trace came from torch.profiler, so hints can
// name its API.
func torch(r *analyze.Result) bool { return r.Framework == "PyTorch" }

// costliestRange is a summary bullet naming the record_function range
// analyze found leading the others in GPU time (e.g. one of several
// variants of a kernel under test), with how it compares to the runner-up.
func costliestRange(r *analyze.Result) (string, bool) {
	a := r.TopRange
	if a == nil {
		return "", false
	}
	return fmt.Sprintf("**%s is the costliest range**: %s of GPU time over %s, %.1f× the next, %s (%s).",
		Code(a.Name), us(a.GPUUs), plural(a.Count, "call"), a.Ratio, Code(a.Next), us(a.NextGPUUs)), true
}

// launchedBy says which op and Python line launched a kernel most often.
func launchedBy(k analyze.Kernel) string {
	var s string
	if len(k.Ops) > 0 {
		s += ", launched by " + Code(k.Ops[0])
	}
	if len(k.Python) > 0 {
		s += " at " + Code(k.Python[0])
	}
	return s
}

// heaviestRoofline returns the roofline row with the most total GPU time.
func heaviestRoofline(rows []analyze.RooflineRow) (analyze.RooflineRow, bool) {
	best, ok := analyze.RooflineRow{}, false
	for _, r := range rows {
		if r.TFLOPS <= 0 {
			continue
		}
		if !ok || r.MeanUs*float64(r.Calls) > best.MeanUs*float64(best.Calls) {
			best, ok = r, true
		}
	}
	return best, ok
}

// busyWithCommunication is the utilisation bullet of a trace with
// communication kernels. An NCCL kernel is "busy" from its launch until the
// other ranks arrive, spinning while it waits, so GPU busy time says
// nothing about whether this GPU limits the step: the bullet quotes the
// compute share (busy time outside communication kernels) and calls the
// GPU the bottleneck only when compute alone fills the step
// (analyze.ComputeBoundShare); otherwise the rest is collectives (exposed
// communication or waiting for a slower rank) and idle time.
func busyWithCommunication(r *analyze.Result, per string, wall, busy float64) string {
	share := r.StepStats.SteadyComputeShare
	head := fmt.Sprintf("**GPU computes %s of %s** (wall %s, GPU busy %s including communication kernels)", pct(share), per, us(wall), us(busy))
	if r.StepStats.Bottleneck == analyze.BottleneckGPU {
		return head + ": compute fills the step, so the GPU is the bottleneck and the kernels below are where time goes."
	}
	if wait := analyze.LedgerUs(r.StepStats.SteadyLedger, analyze.LinePeerWait); wait > 0 && wall > 0 && hasFinding(r, distributed.IDPipelineBubble) && !hasFinding(r, distributed.IDStraggler) {
		// A pipeline stage: its wait is the schedule's bubble, not a
		// late rank.
		return head + fmt.Sprintf(": %s of the step (%s) its send/recv kernels only spin, waiting for a neighbouring pipeline stage. "+
			"That is the pipeline's bubble, not this GPU's work: see the pipeline-bubble finding.", us(wait), pct(wait/wall))
	}
	if wait := analyze.LedgerUs(r.StepStats.SteadyLedger, analyze.LinePeerWait); wait > 0 && wall > 0 {
		// A rank of a run: its spin in collectives is told apart.
		return head + fmt.Sprintf(": %s of the step (%s) its communication kernels only spin, waiting for a later rank to reach the collective. "+
			"That is the late rank's cost, not this GPU's work: fix the rank the others wait for.", us(wait), pct(wait/wall))
	}
	return head + ": the rest of the step is communication kernels alone or idle — a collective counts as busy while it waits for the other ranks, " +
		"so this is not a GPU bottleneck. Compare the ranks' step times (`tracelens report` on the run's directory): a rank that waits in collectives is not the one to fix."
}

// steadyTopKernel returns the kernel of category with the most GPU time
// per steady step (the bullet names the leading category, then its top
// kernel) (autotune launches left out, as in SteadyCategories), its time and
// launches per steady step.
func steadyTopKernel(r *analyze.Result, category string) (analyze.Kernel, float64, float64) {
	var best analyze.Kernel
	var bestUs, bestN float64
	for _, k := range r.Kernels {
		if k.Autotune || k.Category != category {
			continue
		}
		if v, n := k.SteadyPerStep(); v > bestUs {
			best, bestUs, bestN = k, v, n
		}
	}
	return best, bestUs, bestN
}

// steadyGPUUs is the steady step's GPU time over all categories.
func steadyGPUUs(sc []analyze.SteadyCategory) float64 {
	var v float64
	for _, c := range sc {
		v += c.Us
	}
	return v
}

// hasFinding reports whether r has a finding with analyzer id id.
func hasFinding(r *analyze.Result, id string) bool {
	return slices.ContainsFunc(r.Findings, func(f analyze.Finding) bool { return f.ID == id })
}

package analyze

import (
	"cmp"
	"slices"

	"github.com/tracelens/tracelens/parallel"
	"github.com/tracelens/tracelens/stats"
	"github.com/tracelens/tracelens/trace"
)

// ShortKernel is the duration under which a kernel counts as short: its
// launch overhead (a few µs) is comparable to its run time.
const ShortKernel = 10 * trace.Duration(1000)

// LaunchGap is the longest GPU idle gap that counts as waiting for the
// next launch: a host issuing eager ops spends tens of µs per op in Python
// and the dispatcher; longer gaps mean the host was busy elsewhere.
const LaunchGap = 200 * trace.Duration(1000)

func us(d trace.Duration) float64 { return d.Micros() }

// metrics computes every metric of a Result except findings.
func (ix *index) metrics() *Result {
	t := ix.t
	r := &Result{SchemaVersion: SchemaVersion, Source: t.Source, Device: t.DeviceName(), Framework: t.Meta.Framework, Corrections: []string{}}
	// The parts run side by side as chains of what reads what: each
	// writes its own fields of r (on 16 cores the metrics waited for one
	// chain of eight parts, 74 ms, while the cores idled). Only the
	// summary reads the kernels, and the phases and the launches per
	// step read the steps; communication reads the summary and the
	// steps, after both.
	var ops []OpStat
	var annotations []AnnotationStat
	var roofline []RooflineRow
	var launches func(*Result)
	chains := [][]metricPart{
		{{"kernels", ix.kernels}, {"summary", ix.summary}},
		{{"steps", ix.steps}, {"phases", ix.phaseSteps}},
		{{"ops", func(*Result) { ops = ix.ops() }}},
		{{"annotations", func(*Result) { annotations = ix.annotations() }}},
		{{"roofline", func(*Result) { roofline = ix.roofline() }}},
		{{"categories", ix.categories}},
		{{"launches", func(r *Result) { launches = ix.launches(r) }}},
		{{"memory", ix.memoryTimeline}},
	}
	parallel.Each(len(chains), func(i int) {
		for _, part := range chains[i] {
			done := ix.clock.start("metrics: " + part.name)
			part.fn(r)
			done()
		}
	})
	done := ix.clock.start("metrics: communication")
	ix.commSteps(r)
	launches(r)
	done()
	r.Ops, r.Annotations, r.Roofline = ops, annotations, roofline
	deriveFigures(r)
	return r
}

// metricPart is one part of the metrics: it fills its own fields of a
// Result.
type metricPart struct {
	name string
	fn   func(*Result)
}

func (ix *index) kernels(r *Result) {
	t := ix.t
	// The autotune marks are the Phases fact's, not found again.
	var rows []KernelStat
	if ix.PhaseFacts != nil {
		rows, _ = kernelTable(t, ix.PhaseFacts.autotune)
	} else {
		rows, _ = KernelTable(t)
	}
	r.Kernels = make([]Kernel, len(rows))
	names, durs := ix.kernelNames(rows)
	// Each row reads only its own launches.
	parallel.Each(len(rows), func(i int) { r.Kernels[i] = ix.kernelRowOf(rows[i], &names[i], durs) })
}

// kernelRowOf is the Kernel of one KernelTable row: its per-step counts
// and time, category, and the ops and user lines that launch it most
// (counted in names). Its launches' durations are read from durs (by GPU
// index, kernelNames'), 8 bytes a launch in start order, not from their
// records spread over the trace.
func (ix *index) kernelRowOf(row KernelStat, names *launchNames, durs []trace.Duration) Kernel {
	t := ix.t
	k := Kernel{KernelTiming: row.Timing(), ShortName: ShortKernelName(row.Name), Ops: []string{}, Python: []string{},
		PerStep: make([]StepShare, len(t.Steps))}
	for _, g := range row.Launches {
		if st := ix.gpuStep[g]; st >= 0 {
			k.PerStep[st].Count++
			k.PerStep[st].Us += us(durs[g])
		} else {
			k.OutsideSteps++
		}
		if k.Category == "" || k.Category == CategoryCustom {
			k.Category = ix.category(int(g))
		}
	}
	k.Ops = topKeys(names.ops.counts(), MaxAttribution)
	k.Python = topKeys(names.lines.counts(), MaxAttribution)
	return k
}

// launchNames counts the op names and user lines that launch one kernel
// row's launches.
type launchNames struct{ ops, lines nameCounts }

// kernelNames counts, per row, the op names and user lines of the rows'
// launches. It reads the launches in GPU order, not row by row: a row's
// launches are spread over the whole trace, and reading their API calls,
// ops and frames row by row missed the cache at each (two thirds of the
// kernels' time on 96 k launches); in GPU order the calls, ops and frames
// come nearly in their own order. The order is cut in chunks read side
// by side (read in one pass, it put 5-7 ms on the metrics' longest chain
// at 16 cores), whose counts are summed per row. Counts are integers and
// topKeys orders them by count and name, so the order they are counted in
// changes nothing. Counted by runs (a kernel's launches come from a few
// ops and lines, one after another): hashing each launch's two names was
// a quarter of the table's time. It returns the launches' durations too,
// by GPU index, read on the way.
func (ix *index) kernelNames(rows []KernelStat) ([]launchNames, []trace.Duration) {
	t := ix.t
	rowOf := make([]int32, len(t.GPU))
	for i := range rowOf {
		rowOf[i] = -1
	}
	for r := range rows {
		for _, g := range rows[r].Launches {
			rowOf[g] = int32(r)
		}
	}
	durs := make([]trace.Duration, len(t.GPU))
	parts := mapChunks(len(rowOf), func(lo, hi int) []launchNames {
		names := make([]launchNames, len(rows))
		var blk launchBlock
		for b := lo; b < hi; b += len(blk.row) {
			blk.count(ix, names, rowOf, durs, b, min(b+len(blk.row), hi))
		}
		return names
	})
	if len(parts) == 1 {
		return parts[0], durs
	}
	names := make([]launchNames, len(rows))
	parallel.Each(len(rows), func(r int) {
		for _, p := range parts {
			names[r].ops.addAll(&p[r].ops)
			names[r].lines.addAll(&p[r].lines)
		}
	})
	return names, durs
}

// launchBlock is a block of launches in GPU order, read in passes: the
// launches' calls, then their user frames (UserFrames.OfEach, which
// reads a block's frames in loops of their own), then the counts.
type launchBlock struct {
	row             [64]int32
	op, frame, user [64]trace.Index
}

// count counts the op names and user lines of launches [lo, hi) (at
// most a block) into names, by row (rowOf), and notes their durations in
// durs.
func (blk *launchBlock) count(ix *index, names []launchNames, rowOf []int32, durs []trace.Duration, lo, hi int) {
	t := ix.t
	n := 0
	for g := lo; g < hi; g++ {
		r, a := rowOf[g], &t.GPU[g]
		if r < 0 {
			continue
		}
		durs[g] = a.Dur()
		l := a.Launch
		if l == trace.None {
			continue
		}
		c := &t.APICalls[l]
		blk.row[n], blk.op[n], blk.frame[n] = r, c.Op, c.Frame
		n++
	}
	ix.users.OfEach(blk.frame[:n], blk.user[:n])
	// An op's name from the HostTable's name column: 4 bytes an op read,
	// not the op's 96.
	ops := &ix.host.ops
	for i := range n {
		r := blk.row[i]
		if op := blk.op[i]; op != trace.None {
			names[r].ops.add(ops.names[ops.name[op]])
		}
		if f := blk.user[i]; f != trace.None && t.Frames[f].Name != "" {
			names[r].lines.add(t.Frames[f].Name)
		}
	}
}

// nameCounts counts names; a run of one name (interned: compared by
// address first) is counted without hashing it.
type nameCounts struct {
	n        map[string]int
	last     string
	lastRuns int
}

// add counts name once.
func (c *nameCounts) add(name string) {
	if c.lastRuns > 0 && name == c.last {
		c.lastRuns++
		return
	}
	c.flush()
	c.last, c.lastRuns = name, 1
}

// flush moves the pending run into the map.
func (c *nameCounts) flush() {
	if c.lastRuns == 0 {
		return
	}
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[c.last] += c.lastRuns
	c.lastRuns = 0
}

// addAll adds o's counts to c's.
func (c *nameCounts) addAll(o *nameCounts) {
	c.flush()
	if c.n == nil {
		c.n = map[string]int{}
	}
	for name, n := range o.counts() {
		c.n[name] += n
	}
}

// counts returns the counts by name.
func (c *nameCounts) counts() map[string]int {
	c.flush()
	if c.n == nil {
		return map[string]int{}
	}
	return c.n
}

// topKeys returns up to n keys of m with the largest counts (ties by key).
func topKeys(m map[string]int, n int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(m[b], m[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	if len(keys) > n {
		keys = keys[:n]
	}
	return keys
}

// categories fills Result.Categories: each category's GPU time and
// count, in all and per step. It sums by the categories' byte column
// into a slice by category number (the Kernel Categories fact's), not a
// map by name: a name hashed per activity was most of this pass. Each
// category's times are summed in GPU order, as they were.
func (ix *index) categories(r *Result) {
	t := ix.t
	byCat := make([]*CategoryTime, len(ix.catNames))
	var all trace.Duration
	for i := range t.GPU {
		ct := byCat[ix.cat[i]]
		if ct == nil {
			ct = &CategoryTime{Category: ix.catNames[ix.cat[i]], PerStep: make([]StepShare, len(t.Steps))}
			byCat[ix.cat[i]] = ct
		}
		d := t.GPU[i].Dur()
		if st := ix.gpuStep[i]; st >= 0 {
			ct.PerStep[st].Count++
			ct.PerStep[st].Us += us(d)
		}
		ct.Count++
		ct.TotalUs += us(d)
		all += d
	}
	named := map[string]*CategoryTime{}
	for _, ct := range byCat {
		if ct != nil {
			named[ct.Category] = ct
		}
	}
	r.Categories = []CategoryTime{}
	for _, c := range categoryOrder {
		if ct := named[c]; ct != nil {
			if all > 0 {
				ct.Share = ct.TotalUs / us(all)
			}
			r.Categories = append(r.Categories, *ct)
		}
	}
	slices.SortStableFunc(r.Categories, func(a, b CategoryTime) int { return cmp.Compare(b.TotalUs, a.TotalUs) })
}

func (ix *index) summary(r *Result) {
	t := ix.t
	s := &r.Summary
	s.Events = t.Events
	s.Device = t.DeviceName()
	s.Format = t.Meta.Format
	s.Framework = t.Meta.Framework
	s.DistinctKernels = len(r.Kernels)
	for _, k := range r.Kernels {
		s.KernelLaunches += k.Count
		s.GPUKernelUs += k.TotalUs
	}
	for i := range t.GPU {
		switch t.GPU[i].Kind {
		case trace.Memcpy:
			s.Memcpys++
			s.MemcpyUs += us(t.GPU[i].Dur())
		case trace.Memset:
			s.Memsets++
			s.MemsetUs += us(t.GPU[i].Dur())
		}
	}
	span := ix.whole
	s.WallUs = us(span.Dur())
	for _, dev := range ix.devices {
		for _, b := range ix.busy[dev] {
			s.GPUBusyUs += us(b.Dur())
		}
	}
	if s.WallUs > 0 && len(ix.devices) > 0 {
		s.GPUBusyShare = s.GPUBusyUs / (s.WallUs * float64(len(ix.devices)))
	}
	s.Steps = len(t.Steps)
	s.StepsSynthetic = len(t.Steps) == 1 && t.Steps[0].Synthetic
	if len(t.Steps) > 0 && !t.Steps[0].Synthetic {
		s.ProfiledFrom = t.Steps[0].Number
	}
	s.FirstStepIsFirstExecution = s.ProfiledFrom == 0
}

// Median returns the median of v (which it sorts), 0 for none: the one
// median of the project (steps, kernels, diff's samples).
func Median(v []float64) float64 { return median(v) }

// median returns the median of v (which it sorts), 0 for none.
func median(v []float64) float64 { return stats.Median(v) }

// launches fills Result.Launches but for its launches per step, which it
// returns a func to fill once the steps are known: the rest reads only
// the trace, so it runs beside the steps.
func (ix *index) launches(r *Result) func(*Result) {
	t := ix.t
	ls := &r.Launches
	// Sized once: appended one by one, a million kernels' durations
	// left twice their size in garbage (issue 27). Not counted first: a
	// pass to count read every call's and activity's record again, a
	// quarter of this. A call that launched work has a first GPU
	// activity of its own, so there are no more of them than calls or
	// activities (as many on a trace of one activity a launch).
	nAPI := min(len(t.APICalls), len(t.GPU))
	api, queue, kdur := make([]trace.Duration, 0, nAPI), make([]trace.Duration, 0, nAPI), make([]trace.Duration, 0, len(t.GPU))
	for i := range t.APICalls {
		c := &t.APICalls[i]
		if ix.sync[i] { // the Launches fact's
			ls.SyncCalls++
			ls.SyncUs += us(c.Dur())
		}
		if c.FirstGPU == trace.None {
			continue
		}
		api = append(api, c.Dur())
		// A kernel or copy that starts before its launch call returns
		// (a synchronous pageable copy, CUPTI's clocks) waited in no
		// queue: 0, not a negative delay (memcpy-pageable: -7.1 ms mean).
		queue = append(queue, max(0, trace.Duration(t.GPU[c.FirstGPU].Start-c.End)))
	}
	for i := range t.GPU {
		if t.GPU[i].Kind != trace.Kernel {
			continue
		}
		d := t.GPU[i].Dur()
		kdur = append(kdur, d)
		if d < ShortKernel {
			ls.ShortKernels++
		}
	}
	ls.Launches = len(api)
	stat := func(d []trace.Duration) (total, mean, med, p95 float64) {
		if len(d) == 0 {
			return
		}
		var sum trace.Duration
		for _, x := range d {
			sum += x
		}
		// Two ranks each, selected: the three sorts were most of this.
		p := percentiles(d, 50, 95)
		return us(sum), us(sum) / float64(len(d)), us(p[0]), us(p[1])
	}
	ls.APIUs, ls.MeanAPIUs, ls.MedianAPIUs, ls.P95APIUs = stat(api)
	_, ls.MeanQueueUs, ls.MedianQueueUs, ls.P95QueueUs = stat(queue)
	_, ls.MeanKernelUs, ls.MedianKernelUs, _ = stat(kdur)
	if len(kdur) > 0 {
		ls.ShortKernelShare = float64(ls.ShortKernels) / float64(len(kdur))
	}
	return func(r *Result) { r.Launches.PerStep = r.StepStats.MedianLaunches }
}

// durUs turns microseconds back into a Duration for printing.
func durUs(v float64) trace.Duration { return trace.Duration(v*1e3 + 0.5) }

// maxSpeedup is the most a precision fix can speed up a tensor-core
// kernel: the device's fastest 16-bit tensor rate over its fp64 rate; 16×
// for a device without a peak table entry.
func maxSpeedup(pk *Peak) float64 {
	if pk == nil || pk.TFLOPS["fp64"] <= 0 {
		return 16
	}
	return max(pk.TFLOPS["bf16"], pk.TFLOPS["fp16"], pk.TFLOPS["tf32"], pk.TFLOPS["fp32"]) / pk.TFLOPS["fp64"]
}

package distributed

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/stats"
	"github.com/tracelens/tracelens/trace"
)

// Straggler kinds: what makes the late rank late.
const (
	// ComputeStraggler: the rank has more GPU work before the collective.
	ComputeStraggler = "compute"
	// HostStraggler: the GPU idles while the host is busy (input, sleep,
	// Python) before the rank launches the work the collective waits for.
	HostStraggler = "host"
	// UnclearStraggler: neither explains half of the lateness.
	UnclearStraggler = "unclear"
)

// Difference is one thing the straggler's pre-collective windows hold more
// (or less) of than the reference rank's, per step.
type Difference struct {
	// What is "annotation", "op", "kernel", "sync" or "python".
	What string
	Name string
	// Straggler and Reference are the median time per step in the
	// windows (diff's statistic); the counts are mean occurrences per step.
	Straggler      trace.Duration
	Reference      trace.Duration
	StragglerCount float64
	ReferenceCount float64
	// P is the Mann–Whitney U test's p-value of the per-step times (as
	// `diff`): small when the difference holds step after step.
	P float64
}

// Delta is Straggler − Reference.
func (d Difference) Delta() trace.Duration { return d.Straggler - d.Reference }

// Explanation compares the windows before the collectives a straggler
// arrived at last, on the straggler and on a reference rank (the median
// of the others). A window runs from the rank's previous communication
// kernel end (when every rank was last in step) to its arrival.
type Explanation struct {
	Straggler int
	Reference int
	Kind      string
	// Windows is the number of collectives compared; Steps the number of
	// steps they fell in: the samples of the per-step medians.
	Windows int
	Steps   int
	// Late is how much later than the median of the other ranks the
	// straggler arrives, per step.
	Late trace.Duration
	// Window, GPUBusy and GPUIdle are medians per step on each rank
	// ([0] straggler, [1] reference).
	Window  [2]trace.Duration
	GPUBusy [2]trace.Duration
	GPUIdle [2]trace.Duration
	// Compute is the union of compute kernel time per step over the whole
	// trace on each rank: what tells a compute straggler.
	Compute [2]trace.Duration
	// Differences are ranked by |Delta|, largest first.
	Differences []Difference
}

// window is one compared interval on one rank: on the GPU from the
// previous communication kernel's end to this one's start, on the host
// from the previous one's launch to this one's (the host work that made
// the launch late), when the trace has both launches.
type window struct {
	gpu, host trace.Span
	// step numbers the straggler's step the window belongs to (0..n-1),
	// the same on both ranks: per-step figures pair them.
	step int
}

// differences compares every item (range, kernel) the straggler's (a)
// and the reference's (b) windows hold, largest difference first.
func differences(a, b *windowSummary, steps int) []Difference {
	keys := map[itemKey]bool{}
	for k := range a.items {
		keys[k] = true
	}
	for k := range b.items {
		keys[k] = true
	}
	var out []Difference
	for k := range keys {
		x, y := a.item(k, steps), b.item(k, steps)
		_, p := stats.MannWhitneyU(micros(x.dur), micros(y.dur))
		out = append(out, Difference{What: k.what, Name: k.name,
			Straggler: stats.Median(slices.Clone(x.dur)), Reference: stats.Median(slices.Clone(y.dur)),
			StragglerCount: float64(x.count) / float64(steps), ReferenceCount: float64(y.count) / float64(steps), P: p})
	}
	slices.SortFunc(out, func(x, y Difference) int {
		if c := cmp.Compare(abs(y.Delta()), abs(x.Delta())); c != 0 {
			return c
		}
		return strings.Compare(x.What+x.Name, y.What+y.Name)
	})
	return out
}

// Explain compares straggler rank index s with reference rank index ref
// (indexes into run.Ranks) over the collectives s arrived at last, reading
// their full traces with read one after the other (one full model in
// memory at a time).
func (run *Run) Explain(s, ref int, read Reader, extra *regexp.Regexp) (*Explanation, error) {
	ex := &Explanation{Straggler: run.Ranks[s].Rank, Reference: run.Ranks[ref].Rank}
	var ws, wr []window
	var late lateTally
	bucket := map[int]int{}
	for ci := range run.Collectives {
		c := &run.Collectives[ci]
		is, ir := slices.Index(c.Participants, s), slices.Index(c.Participants, ref)
		if is < 0 || ir < 0 {
			continue
		}
		if last, ok := c.lateArrival(); !ok || last != is {
			continue
		}
		late.add(run, c, is)
		st := stepOf(run.Ranks[s].Steps, run.Ranks[s].Collectives[c.Calls[is]].Start)
		b, ok := bucket[st]
		if !ok {
			b = len(bucket)
			bucket[st] = b
		}
		w, v := run.windowBefore(s, c.Calls[is]), run.windowBefore(ref, c.Calls[ir])
		w.step, v.step = b, b
		ws, wr = append(ws, w), append(wr, v)
	}
	ex.Windows = len(ws)
	ex.Steps = max(len(bucket), 1)
	// Lateness per step divides by the trace's steps, as the straggler
	// candidate does, so the finding and its explanation agree.
	ex.Late = late.total() / trace.Duration(run.stepCount())
	a, err := summarizeRank(read, run.Ranks[s].Source, ws, ex.Steps, extra)
	if err != nil {
		return nil, err
	}
	b, err := summarizeRank(read, run.Ranks[ref].Source, wr, ex.Steps, extra)
	if err != nil {
		return nil, err
	}
	for i, sum := range [2]*windowSummary{a, b} {
		idle := make([]trace.Duration, ex.Steps)
		for k := range idle {
			idle[k] = sum.length[k] - sum.busy[k]
		}
		ex.Window[i] = stats.Median(slices.Clone(sum.length))
		ex.GPUBusy[i] = stats.Median(slices.Clone(sum.busy))
		ex.GPUIdle[i] = stats.Median(idle)
	}
	ex.Differences = differences(a, b, ex.Steps)
	// A compute straggler has more GPU work per step over the whole trace,
	// not only in the windows: windows of ranks that arrive early are
	// short, so window figures alone would call any late rank busier.
	for i, ri := range [2]int{s, ref} {
		r := run.Ranks[ri]
		ex.Compute[i] = r.Compute / trace.Duration(max(len(r.Steps), 1))
	}
	busy := ex.Compute[0] - ex.Compute[1]
	idle := ex.GPUIdle[0] - ex.GPUIdle[1]
	switch {
	case ex.Late <= 0:
		ex.Kind = UnclearStraggler
	case busy >= ex.Late/2:
		ex.Kind = ComputeStraggler
	case idle >= ex.Late/2:
		ex.Kind = HostStraggler
	default:
		ex.Kind = UnclearStraggler
	}
	return ex, nil
}

// summarizeRank reads one rank's trace and summarizes its windows; the
// trace is garbage once it returns.
func summarizeRank(read Reader, path string, ws []window, steps int, extra *regexp.Regexp) (*windowSummary, error) {
	t, err := read(path)
	if err != nil {
		return nil, err
	}
	return summarize(t, ws, steps, extra), nil
}

// micros converts durations to microseconds, diff's sample unit.
func micros(v []trace.Duration) []float64 {
	out := make([]float64, len(v))
	for i, d := range v {
		out[i] = d.Micros()
	}
	return out
}

// windowBefore is the window on rank ri before its collective kernel ci.
// On the GPU it starts at the end of the latest communication kernel that
// ended before, else at the start of the step (else the trace) containing
// it; on the host at the latest earlier communication launch.
func (run *Run) windowBefore(ri, ci int) window {
	r := run.Ranks[ri]
	c := &r.Collectives[ci]
	from := r.Span.Start
	if st := stepOf(r.Steps, c.Start); st >= 0 {
		from = r.Steps[st].Start
	}
	var prev, prevLaunch trace.Time = -1 << 62, -1 << 62
	for j := range r.Collectives {
		o := &r.Collectives[j]
		if j != ci && o.End <= c.Start && o.End > prev {
			prev = o.End
		}
		if j != ci && c.Launch >= 0 && o.Launch >= 0 && o.Launch < c.Launch && o.Launch > prevLaunch {
			prevLaunch = o.Launch
		}
	}
	if prev > -1<<62 {
		from = prev
	}
	w := window{gpu: trace.Span{Start: min(from, c.Start), End: c.Start}}
	w.host = w.gpu
	if c.Launch >= 0 {
		hostFrom := from
		if prevLaunch > -1<<62 {
			hostFrom = prevLaunch
		}
		w.host = trace.Span{Start: min(hostFrom, c.Launch), End: c.Launch}
	}
	return w
}

// builtinName drops the object address from a built-in frame's name
// ("<built-in method run_backward of ... object at 0x7f4f2a7a87e0>"), which
// differs between processes.
func builtinName(s string) string {
	if i := strings.LastIndex(s, " at 0x"); i > 0 {
		return s[:i] + ">"
	}
	return s
}

type itemKey struct{ what, name string }

// itemSteps is one item's time per step and its occurrences in total.
type itemSteps struct {
	dur   []trace.Duration
	count int
}

// windowSummary is one rank's windows summed per step.
type windowSummary struct {
	length []trace.Duration
	busy   []trace.Duration
	items  map[itemKey]*itemSteps
}

// item returns k's per-step figures (zeros when the rank has none).
func (s *windowSummary) item(k itemKey, steps int) *itemSteps {
	if v, ok := s.items[k]; ok {
		return v
	}
	return &itemSteps{dur: make([]trace.Duration, steps)}
}

// labelled is a disjoint interval of one step's windows.
type labelled struct {
	trace.Span
	step int
}

// byStep unions each step's windows (gpu or host side) and returns them
// sorted, each labelled with its step.
func byStep(ws []window, steps int, host bool) []labelled {
	per := make([][]trace.Span, steps)
	for _, w := range ws {
		s := w.gpu
		if host {
			s = w.host
		}
		per[w.step] = append(per[w.step], s)
	}
	var out []labelled
	for st, spans := range per {
		for _, s := range interval.Union(interval.NonEmpty(spans)) {
			out = append(out, labelled{s, st})
		}
	}
	slices.SortFunc(out, func(a, b labelled) int { return cmpTime(a.Start, b.Start) })
	return out
}

// spread adds the overlap of s with each labelled interval to its step.
func spread(in []labelled, s trace.Span, add func(step int, d trace.Duration)) {
	i, _ := slices.BinarySearchFunc(in, s.Start, func(l labelled, t trace.Time) int { return cmpTime(l.End, t) })
	for ; i < len(in) && in[i].Start < s.End; i++ {
		if d := trace.Duration(min(in[i].End, s.End) - max(in[i].Start, s.Start)); d > 0 {
			add(in[i].step, d)
		}
	}
}

// summarize totals per step what ran inside one rank's windows: host
// annotations, top-level ops, host syncs and built-in Python calls in the
// host windows, compute kernels and GPU busy time in the GPU windows
// (clipped to the windows).
func summarize(t *trace.Trace, ws []window, steps int, extra *regexp.Regexp) *windowSummary {
	sum := &windowSummary{length: make([]trace.Duration, steps), busy: make([]trace.Duration, steps), items: map[itemKey]*itemSteps{}}
	gwin, hwin := byStep(ws, steps, false), byStep(ws, steps, true)
	for _, w := range gwin {
		sum.length[w.step] += w.Dur()
	}
	add := func(what, name string, s trace.Span) {
		in := hwin
		if what == "kernel" {
			in = gwin
		}
		var v *itemSteps
		spread(in, s, func(step int, d trace.Duration) {
			if v == nil {
				k := itemKey{what, name}
				if v = sum.items[k]; v == nil {
					v = &itemSteps{dur: make([]trace.Duration, steps)}
					sum.items[k] = v
				}
				v.count++
			}
			v.dur[step] += d
		})
	}
	for i := range t.Annotations {
		a := &t.Annotations[i]
		if !a.GPU && !strings.HasPrefix(a.Name, "ProfilerStep#") {
			add("annotation", a.Name, a.Span)
		}
	}
	for i := range t.Ops {
		if t.Ops[i].Parent == trace.None {
			add("op", t.Ops[i].Name, t.Ops[i].Span)
		}
	}
	for i := range t.APICalls {
		c := &t.APICalls[i]
		if strings.Contains(c.Name, "Synchronize") || c.Name == "cudaMemcpy" || c.Name == "cuMemcpyDtoH_v2" {
			add("sync", c.Name, c.Span)
		}
	}
	for i := range t.Frames {
		if strings.HasPrefix(t.Frames[i].Name, "<built-in") {
			add("python", builtinName(t.Frames[i].Name), t.Frames[i].Span)
		}
	}
	var gpu []trace.Span
	for i := range t.GPU {
		g := &t.GPU[i]
		if g.Kind == trace.Kernel && IsCommKernel(g.Name, extra) {
			continue
		}
		gpu = append(gpu, g.Span)
		if g.Kind == trace.Kernel {
			add("kernel", analyze.ShortKernelName(g.Name), g.Span)
		}
	}
	for _, s := range interval.Union(interval.NonEmpty(gpu)) {
		spread(gwin, s, func(step int, d trace.Duration) { sum.busy[step] += d })
	}
	return sum
}

// Sentence says in words why the straggler is late, naming the largest
// difference of the fitting kind.
func (ex *Explanation) Sentence(kind string) string {
	head := fmt.Sprintf("rank %d reaches the %s %s late per step (median of the other ranks)", ex.Straggler, kind, ex.Late)
	switch ex.Kind {
	case HostStraggler:
		idle := ex.GPUIdle[0] - ex.GPUIdle[1]
		if d, ok := ex.top("annotation", "python", "sync", "op"); ok && d.Delta() < idle/2 {
			h0, h1 := ex.hostOps()
			return fmt.Sprintf("%s: its host is slower across the board before the collective (top-level ops %s vs %s on rank %d, the GPU idle %s longer); the largest single difference is %s `%s`: %s vs %s",
				head, h0, h1, ex.Reference, idle, whatWord(d.What), d.Name, d.Straggler, d.Reference)
		}
		if d, ok := ex.top("annotation", "python", "sync", "op"); ok {
			return fmt.Sprintf("%s: its %s `%s` takes %s vs %s on rank %d per step%s, on the host, with the GPU idle %s longer",
				head, whatWord(d.What), d.Name, d.Straggler, d.Reference, ex.Reference, ex.pText(d), ex.GPUIdle[0]-ex.GPUIdle[1])
		}
		return fmt.Sprintf("%s: its GPU idles %s longer before the collective than rank %d's, waiting on the host", head, ex.GPUIdle[0]-ex.GPUIdle[1], ex.Reference)
	case ComputeStraggler:
		if d, ok := ex.top("kernel"); ok {
			return fmt.Sprintf("%s: it runs more GPU work (compute kernels %s per step vs %s on rank %d); the largest difference before the collective is kernel `%s`: %s in %.1f launches vs %s in %.1f%s",
				head, ex.Compute[0], ex.Compute[1], ex.Reference, d.Name, d.Straggler, d.StragglerCount, d.Reference, d.ReferenceCount, ex.pText(d))
		}
		return fmt.Sprintf("%s: it runs more GPU work (compute kernels %s per step vs %s on rank %d)", head, ex.Compute[0], ex.Compute[1], ex.Reference)
	}
	if len(ex.Differences) > 0 {
		d := ex.Differences[0]
		return fmt.Sprintf("%s; neither extra GPU work nor GPU idle time explains half of it; the largest difference is %s `%s`: %s vs %s on rank %d",
			head, whatWord(d.What), d.Name, d.Straggler, d.Reference, ex.Reference)
	}
	return head
}

// pText gives a difference's significance the way diff does, when there
// are enough steps to test.
func (ex *Explanation) pText(d Difference) string {
	if ex.Steps < 2 {
		return ""
	}
	return fmt.Sprintf(" (medians over %d steps, Mann–Whitney p=%.3f)", ex.Steps, d.P)
}

// hostOps sums top-level op time per step in the windows on each rank.
func (ex *Explanation) hostOps() (s, r trace.Duration) {
	for _, d := range ex.Differences {
		if d.What == "op" {
			s += d.Straggler
			r += d.Reference
		}
	}
	return s, r
}

// top returns the largest positive difference among the given kinds.
func (ex *Explanation) top(what ...string) (Difference, bool) {
	var best Difference
	found := false
	for _, d := range ex.Differences {
		if slices.Contains(what, d.What) && d.Delta() > 0 && (!found || d.Delta() > best.Delta()) {
			best, found = d, true
		}
	}
	return best, found
}

func whatWord(what string) string {
	switch what {
	case "annotation":
		return "range"
	case "python":
		return "Python call"
	case "sync":
		return "host sync"
	}
	return what
}

package distributed

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/analyze"
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
	// Straggler and Reference are the time per step in the windows; the
	// counts are occurrences per step.
	Straggler      trace.Duration
	Reference      trace.Duration
	StragglerCount float64
	ReferenceCount float64
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
	// steps they fell in (figures are per step).
	Windows int
	Steps   int
	// Late is how much later than the median of the other ranks the
	// straggler arrives, per step.
	Late trace.Duration
	// Window, GPUBusy and GPUIdle are per step on each rank
	// ([0] straggler, [1] reference).
	Window  [2]trace.Duration
	GPUBusy [2]trace.Duration
	GPUIdle [2]trace.Duration
	// Differences are ranked by |Delta|, largest first.
	Differences []Difference
}

// window is one compared interval on one rank: on the GPU from the
// previous communication kernel's end to this one's start, on the host
// from the previous one's launch to this one's (the host work that made
// the launch late), when the trace has both launches.
type window struct{ gpu, host trace.Span }

// Explain compares straggler rank index s with reference rank index ref
// (indexes into run.Ranks) over the collectives s arrived at last, reading
// their full traces with read one after the other (one full model in
// memory at a time).
func (run *Run) Explain(s, ref int, read Reader, extra *regexp.Regexp) (*Explanation, error) {
	ex := &Explanation{Straggler: run.Ranks[s].Rank, Reference: run.Ranks[ref].Rank}
	var ws, wr []window
	steps := map[int]bool{}
	for ci := range run.Collectives {
		c := &run.Collectives[ci]
		is, ir := slices.Index(c.Participants, s), slices.Index(c.Participants, ref)
		if is < 0 || ir < 0 {
			continue
		}
		last, spread := c.Last()
		if last != is || spread <= lateSlack {
			continue
		}
		others := make([]trace.Duration, 0, len(c.Arrive)-1)
		for i, a := range c.Arrive {
			if i != is {
				others = append(others, trace.Duration(a))
			}
		}
		ex.Late += trace.Duration(c.Arrive[is]) - median(others)
		ws = append(ws, run.windowBefore(s, c.Calls[is]))
		wr = append(wr, run.windowBefore(ref, c.Calls[ir]))
		steps[stepOf(run.Ranks[s].Steps, run.Ranks[s].Collectives[c.Calls[is]].Start)] = true
	}
	ex.Windows = len(ws)
	ex.Steps = max(len(steps), 1)
	if len(run.Ranks[s].Steps) > 0 {
		ex.Steps = max(ex.Steps, len(run.Ranks[s].Steps))
	}
	per := trace.Duration(ex.Steps)
	ex.Late /= per
	a, err := summarizeRank(read, run.Ranks[s].Source, ws, extra)
	if err != nil {
		return nil, err
	}
	b, err := summarizeRank(read, run.Ranks[ref].Source, wr, extra)
	if err != nil {
		return nil, err
	}
	for i, sum := range [2]*windowSummary{a, b} {
		ex.Window[i] = sum.length / per
		ex.GPUBusy[i] = sum.busy / per
		ex.GPUIdle[i] = (sum.length - sum.busy) / per
	}
	keys := map[itemKey]bool{}
	for k := range a.items {
		keys[k] = true
	}
	for k := range b.items {
		keys[k] = true
	}
	for k := range keys {
		x, y := a.items[k], b.items[k]
		ex.Differences = append(ex.Differences, Difference{What: k.what, Name: k.name,
			Straggler: x.dur / per, Reference: y.dur / per,
			StragglerCount: float64(x.count) / float64(per), ReferenceCount: float64(y.count) / float64(per)})
	}
	slices.SortFunc(ex.Differences, func(x, y Difference) int {
		if c := cmp.Compare(abs(y.Delta()), abs(x.Delta())); c != 0 {
			return c
		}
		return strings.Compare(x.What+x.Name, y.What+y.Name)
	})
	busy := ex.GPUBusy[0] - ex.GPUBusy[1]
	idle := ex.GPUIdle[0] - ex.GPUIdle[1]
	switch {
	case ex.Late <= 0:
		ex.Kind = UnclearStraggler
	case busy >= ex.Late/2 && busy >= idle:
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
func summarizeRank(read Reader, path string, ws []window, extra *regexp.Regexp) (*windowSummary, error) {
	t, err := read(path)
	if err != nil {
		return nil, err
	}
	return summarize(t, ws, extra), nil
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

type itemSum struct {
	dur   trace.Duration
	count int
}

type windowSummary struct {
	length trace.Duration
	busy   trace.Duration
	items  map[itemKey]itemSum
}

// summarize totals, over windows, what ran inside them on one rank: host
// annotations, top-level ops, host syncs and built-in Python calls in the
// host windows, compute kernels and GPU busy time in the GPU windows
// (clipped to the windows).
func summarize(t *trace.Trace, ws []window, extra *regexp.Regexp) *windowSummary {
	sum := &windowSummary{items: map[itemKey]itemSum{}}
	win := make([]trace.Span, len(ws))
	hwin := make([]trace.Span, len(ws))
	for i, w := range ws {
		win[i], hwin[i] = w.gpu, w.host
		sum.length += w.gpu.Dur()
	}
	win, hwin = unionOf(win), unionOf(hwin)
	add := func(what, name string, s trace.Span) {
		in := hwin
		if what == "kernel" {
			in = win
		}
		d := overlap(in, s)
		if d <= 0 {
			return
		}
		k := itemKey{what, name}
		v := sum.items[k]
		v.dur += d
		v.count++
		sum.items[k] = v
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
	busy := unionOf(gpu)
	for _, w := range win {
		sum.busy += overlap(busy, w)
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
			return fmt.Sprintf("%s: its %s `%s` takes %s vs %s on rank %d, on the host, with the GPU idle %s longer",
				head, whatWord(d.What), d.Name, d.Straggler, d.Reference, ex.Reference, ex.GPUIdle[0]-ex.GPUIdle[1])
		}
		return fmt.Sprintf("%s: its GPU idles %s longer before the collective than rank %d's, waiting on the host", head, ex.GPUIdle[0]-ex.GPUIdle[1], ex.Reference)
	case ComputeStraggler:
		if d, ok := ex.top("kernel"); ok {
			return fmt.Sprintf("%s: it runs more GPU work before the collective (%s busy vs %s on rank %d); the largest difference is kernel `%s`: %s in %.1f launches vs %s in %.1f",
				head, ex.GPUBusy[0], ex.GPUBusy[1], ex.Reference, d.Name, d.Straggler, d.StragglerCount, d.Reference, d.ReferenceCount)
		}
		return fmt.Sprintf("%s: it runs more GPU work before the collective (%s busy vs %s on rank %d)", head, ex.GPUBusy[0], ex.GPUBusy[1], ex.Reference)
	}
	if len(ex.Differences) > 0 {
		d := ex.Differences[0]
		return fmt.Sprintf("%s; neither extra GPU work nor GPU idle time explains half of it; the largest difference is %s `%s`: %s vs %s on rank %d",
			head, whatWord(d.What), d.Name, d.Straggler, d.Reference, ex.Reference)
	}
	return head
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

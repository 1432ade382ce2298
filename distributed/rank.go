package distributed

import (
	"regexp"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/trace"
)

// Rank is what cross-rank analysis keeps of one rank's trace: its
// communication kernels with their arguments and per-kernel overlap, its
// steps and totals. The full model is dropped after the rank is read, so
// a run of many ranks costs little more memory than its largest rank.
type Rank struct {
	// Rank is the global rank (distributedInfo.rank, else from the file
	// name); RankFrom says which ("distributedInfo" or "file name").
	Rank     int
	RankFrom string
	// WorldSize is distributedInfo.world_size, 0 when absent.
	WorldSize int
	// BaseTime is the trace's baseTimeNanoseconds (Kineto): its clock
	// plus BaseTime is the wall clock. 0 when absent.
	BaseTime int64
	Source   string
	// Bytes is the JSON size read.
	Bytes  int64
	Device string
	Groups []Group
	Steps  []trace.Span
	// Collectives are the rank's communication kernels by start time.
	Collectives []RankCollective

	// CommKernel is the total duration of communication kernels; Exposed
	// the part of it when no compute kernel ran on any stream of the rank;
	// Compute the union of compute kernel time.
	CommKernel trace.Duration
	Exposed    trace.Duration
	Compute    trace.Duration
	// Busy is the union of the rank's GPU activity: kernels of every
	// kind (spinning communication kernels included), copies and sets.
	// GPUWindow runs from its first GPU activity's start to its last
	// one's end.
	Busy      trace.Duration
	GPUWindow trace.Span
	// HostOwn is, per step (as Steps), the step's time less the time the
	// host spent in calls that wait for the GPU (analyze.IsSyncCall): the
	// host's own work, below which the rank's step cannot shrink when the
	// rank it waits for is fixed. Nil when the trace has no API calls.
	HostOwn []trace.Duration
	// Span is the interval covered by the rank's events.
	Span trace.Span
	// Events is the number of events in the file; Format its dialect.
	Events int
	Format string
	// Kernels sums every kernel name's launches on this rank.
	Kernels []KernelSum
}

// KernelSum is one kernel name's launches on one rank.
type KernelSum struct {
	Name     string
	Count    int
	Total    trace.Duration
	Min, Max trace.Duration
}

// Group is a process group as distributedInfo.pg_config describes it.
type Group struct {
	Name  string
	Desc  string
	Size  int
	Ranks []int
}

// RankCollective is one communication kernel on one rank.
type RankCollective struct {
	Kernel string
	Kind   string
	trace.Span
	Stream int32
	// Launch is when the host launched it (the launch call's start), or
	// -1 when the trace does not say (launched before profiling began).
	Launch trace.Time
	// Exposed is the part of the kernel when no compute kernel ran;
	// Under the rank's compute kernel time inside the kernel (disjoint,
	// sorted), from which the part of its wait compute hid is found once
	// the collective is matched (PeerWaits).
	Exposed trace.Duration
	Under   []trace.Span
	// Active is the rank's other GPU activity (compute kernels, copies,
	// sets) inside the kernel (disjoint, sorted): what the GPU did besides
	// spinning while the kernel waited (the GPU spin: outside).
	Active []trace.Span
	// Args holds the profiler's communication arguments; HasArgs is false
	// when the trace has none for this kernel (launched before the
	// profiler started, or a custom kernel).
	Args    commArgs
	HasArgs bool
	// P2P are the sends and recvs a send/recv kernel carries (attachP2P),
	// in the order they were issued; nil for collectives.
	P2P []P2POp
}

// noGroup is the group key of kernels whose trace names no group.
const noGroup = "?"

// Group returns the process-group key of the collective: its name when
// known, else its description, else noGroup.
func (c *RankCollective) Group() string {
	switch {
	case c.Args.GroupName != "":
		return c.Args.GroupName
	case c.Args.GroupDesc != "":
		return c.Args.GroupDesc
	}
	return noGroup
}

var rankInName = regexp.MustCompile(`(?i)rank[_-]?(\d+)`)

// rankFromName reads "rank3" / "rank_3" / "rank-3" in a file name; -1 when
// absent.
func rankFromName(path string) int {
	m := rankInName.FindAllStringSubmatch(path, -1)
	if len(m) == 0 {
		return -1
	}
	n := 0
	for _, c := range m[len(m)-1][1] {
		n = n*10 + int(c-'0')
		if n > 1<<24 {
			return -1
		}
	}
	return n
}

// compact builds the Rank of one trace. sc holds what the scanner saw.
func compact(t *trace.Trace, sc *commScanner, path string, size int64, extra *regexp.Regexp) *Rank {
	r := &Rank{Rank: -1, Source: path, Bytes: size, BaseTime: t.Meta.BaseTimeNanoseconds, Device: sc.names.of(t.DeviceName()), Span: t.Span(), Events: t.Events, Format: sc.names.of(t.Meta.Format)}
	if sc.dist != nil {
		d := gjson.ParseBytes(sc.dist)
		if v := d.Get("rank"); v.Exists() {
			r.Rank, r.RankFrom = int(v.Int()), "distributedInfo"
		}
		r.WorldSize = int(d.Get("world_size").Int())
		d.Get("pg_config").ForEach(func(_, g gjson.Result) bool {
			grp := Group{Name: sc.names.of(scalar(g.Get("pg_name"))), Desc: sc.names.of(g.Get("pg_desc").Str), Size: int(g.Get("pg_size").Int())}
			g.Get("ranks").ForEach(func(_, x gjson.Result) bool {
				grp.Ranks = append(grp.Ranks, int(x.Int()))
				return true
			})
			r.Groups = append(r.Groups, grp)
			return true
		})
	}
	if r.Rank < 0 {
		if n := rankFromName(path); n >= 0 {
			r.Rank, r.RankFrom = n, "file name"
		}
	}
	for _, s := range t.Steps {
		if !s.Synthetic {
			r.Steps = append(r.Steps, s.Span)
		}
	}
	r.HostOwn = hostOwn(t, r.Steps)
	var compute []trace.Span
	byName := map[string]int{}
	for i := range t.GPU {
		g := &t.GPU[i]
		if g.Kind != trace.Kernel {
			continue
		}
		k, ok := byName[g.Name]
		if !ok {
			k = len(r.Kernels)
			byName[g.Name] = k
			r.Kernels = append(r.Kernels, KernelSum{Name: sc.names.of(g.Name), Min: g.Dur(), Max: g.Dur()})
		}
		ks := &r.Kernels[k]
		ks.Count++
		ks.Total += g.Dur()
		ks.Min, ks.Max = min(ks.Min, g.Dur()), max(ks.Max, g.Dur())
		if !IsCommKernel(g.Name, extra) {
			compute = append(compute, g.Span)
			continue
		}
		c := RankCollective{Kernel: sc.names.of(g.Name), Span: g.Span, Stream: g.Stream, Launch: -1}
		if g.Launch != trace.None {
			c.Launch = t.APICalls[g.Launch].Start
		}
		c.Args, c.HasArgs = argsOf(t, sc, int32(i))
		c.Kind = CollectiveKind(c.Args.Collective, g.Name)
		if c.Args.DType == "" {
			c.Args.DType = dtypeFromKernel(g.Name)
		}
		r.Collectives = append(r.Collectives, c)
	}
	union := interval.Union(interval.NonEmpty(compute))
	r.Compute = interval.Length(union)
	slices.SortFunc(r.Collectives, func(a, b RankCollective) int { return cmpTime(a.Start, b.Start) })
	attachP2P(t, sc, r)
	for i := range r.Collectives {
		c := &r.Collectives[i]
		c.Under = interval.Within(union, c.Span)
		c.Exposed = c.Dur() - interval.Length(c.Under)
		r.CommKernel += c.Dur()
		r.Exposed += c.Exposed
	}
	gpuActivity(t, r, extra)
	return r
}

// gpuActivity sets r's Busy and GPUWindow from every GPU activity of t,
// and each of r's collectives' Active: the activity other than
// communication kernels inside it.
func gpuActivity(t *trace.Trace, r *Rank, extra *regexp.Regexp) {
	var all, other []trace.Span
	for i := range t.GPU {
		g := &t.GPU[i]
		if g.End <= g.Start {
			continue
		}
		if len(all) == 0 {
			r.GPUWindow = g.Span
		}
		r.GPUWindow = trace.Span{Start: min(r.GPUWindow.Start, g.Start), End: max(r.GPUWindow.End, g.End)}
		all = append(all, g.Span)
		if g.Kind != trace.Kernel || !IsCommKernel(g.Name, extra) {
			other = append(other, g.Span)
		}
	}
	r.Busy = interval.UnionLength(all)
	u := interval.Union(other)
	for i := range r.Collectives {
		c := &r.Collectives[i]
		c.Active = interval.Within(u, c.Span)
	}
}

// argsOf finds the communication arguments of GPU activity g: on the
// kernel event itself (by correlation id), else on the record_param_comms
// op with the kernel's External id, else on an op around its launch.
func argsOf(t *trace.Trace, sc *commScanner, g int32) (commArgs, bool) {
	k := &t.GPU[g]
	if a, ok := sc.byCorr[k.Correlation]; ok && k.Correlation != 0 {
		return a, true
	}
	if a, ok := sc.byExtID[k.ExternalID]; ok && k.ExternalID != 0 {
		return a, true
	}
	for op := t.LaunchOp(g); op != trace.None; op = t.Ops[op].Parent {
		if a, ok := sc.byExtID[t.Ops[op].ExternalID]; ok && t.Ops[op].ExternalID != 0 {
			return a, true
		}
	}
	return commArgs{Seq: -1}, false
}

func cmpTime(a, b trace.Time) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// queuedLaunch: a launch call longer than this waited for the GPU's
// launch queue (launches take a few to tens of µs).
const queuedLaunch = trace.Duration(200_000)

// hostOwn is, per step, the step range's time less what t's API calls
// that wait for the GPU took inside it (each instant once: syncs,
// synchronous copies, launches blocked on a full queue): the host's own
// work in the step. Nil when t has no API calls.
func hostOwn(t *trace.Trace, steps []trace.Span) []trace.Duration {
	if len(t.APICalls) == 0 || len(steps) == 0 {
		return nil
	}
	var blocked []trace.Span
	for i := range t.APICalls {
		c := &t.APICalls[i]
		// A launch that takes this long waits for room in the GPU's
		// queue: a host that runs ahead without syncing waits there.
		queued := c.Dur() > queuedLaunch && strings.Contains(c.Name, "Launch")
		if c.End > c.Start && (analyze.IsSyncCall(c.Name) || queued) {
			blocked = append(blocked, c.Span)
		}
	}
	u := interval.Union(blocked)
	out := make([]trace.Duration, len(steps))
	for i, st := range steps {
		out[i] = st.Dur() - interval.Overlap(u, st)
	}
	return out
}

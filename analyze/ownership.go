package analyze

import (
	"maps"
	"slices"

	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/trace"

	"cmp"
	"sort"
	"sync"
)

// Ownership answers, for a host interval on one thread (a record_function
// range, an op, a Python frame), which GPU work it owns: the kernels,
// memcpys and memsets (all streams, all devices) whose launch API call
// started on that thread inside the interval, bounds included. Owned work
// may run long after the interval ends (launches are asynchronous), and
// work still running from earlier launches while the interval is open is
// not its own: "GPU busy inside the range's time window" measures
// neither. A graph launch owns every activity that carries its
// correlation id.
var Ownership = &Analyzer{
	Name: "ownership",
	Doc: "Gives each host interval on a thread (record_function range, op, Python frame) the GPU activities whose launch call started " +
		"inside it on that thread, wherever and whenever they ran: their GPU time (sum and union), count and extent, the interval's launch " +
		"API time, and the queue at entry (how long the GPU was still running work launched before the interval began).",
	Requires: []*Analyzer{HostTable},
	Fact: func(p *Pass) (any, error) {
		host, err := hostTableOf(p)
		if err != nil {
			return nil, err
		}
		return newOwnership(p.Trace, host), nil
	},
}

// OwnershipFacts is the result of Ownership.
type OwnershipFacts struct {
	t *trace.Trace
	// launched[byCall[c]:byCall[c+1]] are the GPU activities API call c
	// launched (one, or a graph launch's many).
	byCall   []int32
	launched []int32
	// calls are the launch calls (those that launched an activity or are
	// named as launches) in APICalls order, so by thread then start;
	// thread[th] is the [lo, hi) of thread th's in calls. The prefix sums
	// over calls (index i: calls [0, i)) give the GPU time, activity and
	// kernel counts and launch API time of a run of calls.
	calls  []int32
	thread map[trace.Index][2]int
	// starts are the calls' starts, by calls' index: what callRange
	// searches (through calls into the calls themselves, each probe
	// missed the cache: a third of the annotations' metrics), with
	// samples (sampledTimes).
	starts                sampledTimes
	gpu, api              []trace.Duration
	activities, kernelsBy []int32
	// queue holds per device the activities ordered by launch time (their
	// launch call's start, their own start without one) with the latest
	// end among those launched up to each. Built on the first question
	// (queueOnce): 16 bytes an activity that most runs never read
	// (issue 27).
	queue     map[int32]*launchQueue
	queueOnce sync.Once
}

// launchQueue is one device's activities by launch time.
type launchQueue struct {
	at     []trace.Time
	maxEnd []trace.Time
}

// Owned is the GPU work a host interval owns and the host time around it.
type Owned struct {
	// Activities and Kernels count the owned GPU activities and, of them,
	// the kernels; Launches counts the launch calls inside the interval.
	Activities, Kernels, Launches int
	// GPUTime is the sum of the owned activities' durations; GPUBusy the
	// length of their union (less when they overlap on several streams).
	GPUTime, GPUBusy trace.Duration
	// Extent runs from the first owned activity's start to the last one's
	// end (zero without any).
	Extent trace.Span
	// Wall is the interval's own length (host time); LaunchAPI the time of
	// the launch calls inside it.
	Wall, LaunchAPI trace.Duration
	// QueueAtEntry is how long after the interval began the GPU still ran
	// work launched before it, on the devices its own work runs on (all
	// devices when it owns none): the latest end among activities launched
	// earlier, minus the interval's start, at least 0.
	QueueAtEntry trace.Duration
}

// newOwnership indexes launches by thread and activities by launch
// (host: t's HostTable, whose call columns it reads).
func newOwnership(t *trace.Trace, host *hostTable) *OwnershipFacts {
	o := &OwnershipFacts{t: t, byCall: make([]int32, len(t.APICalls)+1), thread: map[trace.Index][2]int{}}
	sums := o.indexLaunched()
	o.indexCalls(&host.calls, sums)
	return o
}

// indexLaunched lists the activities each call launched (launched, by
// byCall). The activities are counted per call in one pass, and listed
// in model order as they come: where their launch calls come in the
// same order (one stream's activities, launched in order), that is the
// list by call, and the pass that placed each activity by its call's
// count is not made. It returns each call's launched GPU time and
// kernels, summed in the same pass over the activities in order.
func (o *OwnershipFacts) indexLaunched() callSums {
	t := o.t
	list := make([]int32, 0, len(t.GPU))
	sums := callSums{gpu: make([]trace.Duration, len(t.APICalls)), kernels: make([]int32, len(t.APICalls))}
	inOrder, last := true, trace.None
	for g := range t.GPU {
		a := &t.GPU[g]
		if l := a.Launch; l != trace.None {
			o.byCall[l+1]++
			sums.gpu[l] += a.Dur()
			if a.Kind == trace.Kernel {
				sums.kernels[l]++
			}
			inOrder = inOrder && l >= last
			last = l
			list = append(list, int32(g))
		}
	}
	for c := range t.APICalls {
		o.byCall[c+1] += o.byCall[c]
	}
	if len(list) < len(t.GPU) {
		list = slices.Clone(list) // kept for the analysis: at its size
	}
	o.launched = list
	if inOrder {
		return sums
	}
	fill := slices.Clone(o.byCall[:len(t.APICalls)])
	for i := range t.GPU {
		if l := t.GPU[i].Launch; l != trace.None {
			o.launched[fill[l]] = int32(i)
			fill[l]++
		}
	}
	return sums
}

// callSums are, per API call, the GPU time and kernels of the
// activities it launched: summed in indexLaunched's pass over the
// activities in order, where indexCalls summed them call by call, each
// activity's record read out of order (integer sums: the same in any
// order).
type callSums struct {
	gpu     []trace.Duration
	kernels []int32
}

// indexCalls lists the launch calls per thread with their prefix sums,
// in one pass over the calls' columns (calls): sized for the calls that
// launched an activity (counted from byCall), made to size again only
// where calls named as launches launched none. A thread's run is kept
// while its calls follow one another, not looked up and stored in the
// map per call (the calls come by thread).
func (o *OwnershipFacts) indexCalls(calls *callColumns, sums callSums) {
	t := o.t
	n := 0
	for c := range t.APICalls {
		if o.byCall[c+1] > o.byCall[c] {
			n++
		}
	}
	starts := make([]trace.Time, 0, n)
	o.calls = make([]int32, 0, n)
	o.gpu, o.api = append(make([]trace.Duration, 0, n+1), 0), append(make([]trace.Duration, 0, n+1), 0)
	o.activities, o.kernelsBy = append(make([]int32, 0, n+1), 0), append(make([]int32, 0, n+1), 0)
	var th trace.Index // the thread whose run r is, while open
	var r [2]int
	open := false
	for c, kind := range calls.kind {
		lo, hi := o.byCall[c], o.byCall[c+1]
		if hi == lo && kind&callLaunch == 0 {
			continue
		}
		if callTh := calls.thread[c]; !open || callTh != th {
			if open {
				o.thread[th] = r
			}
			var ok bool
			if r, ok = o.thread[callTh]; !ok {
				r = [2]int{len(o.calls), len(o.calls)}
			}
			th, open = callTh, true
		}
		r[1]++
		o.calls, starts = append(o.calls, int32(c)), append(starts, calls.start[c])
		gpu, kernels := sums.gpu[c], sums.kernels[c]
		k := len(o.gpu) - 1
		o.gpu = append(o.gpu, o.gpu[k]+gpu)
		o.api = append(o.api, o.api[k]+trace.Duration(calls.end[c]-calls.start[c]))
		o.activities = append(o.activities, o.activities[k]+hi-lo)
		o.kernelsBy = append(o.kernelsBy, o.kernelsBy[k]+kernels)
	}
	if open {
		o.thread[th] = r
	}
	if len(o.calls) > n {
		o.calls, starts, o.gpu, o.api = slices.Clone(o.calls), slices.Clone(starts), slices.Clone(o.gpu), slices.Clone(o.api)
		o.activities, o.kernelsBy = slices.Clone(o.activities), slices.Clone(o.kernelsBy)
	}
	o.starts = newSampledTimes(starts, slices.Collect(maps.Values(o.thread)))
}

// queues returns the launch queues, built on the first call.
func (o *OwnershipFacts) queues() map[int32]*launchQueue {
	o.queueOnce.Do(o.indexQueues)
	return o.queue
}

// indexQueues orders each device's activities by launch time.
func (o *OwnershipFacts) indexQueues() {
	t := o.t
	type launchEnd struct{ at, end trace.Time }
	per := map[int32][]launchEnd{}
	for i := range t.GPU {
		g := &t.GPU[i]
		at := g.Start
		if g.Launch != trace.None {
			at = t.APICalls[g.Launch].Start
		}
		per[g.Device] = append(per[g.Device], launchEnd{at, g.End})
	}
	o.queue = make(map[int32]*launchQueue, len(per))
	for dev, v := range per {
		slices.SortFunc(v, func(a, b launchEnd) int { return cmp.Compare(a.at, b.at) })
		q := &launchQueue{at: make([]trace.Time, len(v)), maxEnd: make([]trace.Time, len(v))}
		for i, e := range v {
			q.at[i], q.maxEnd[i] = e.at, e.end
			if i > 0 {
				q.maxEnd[i] = max(q.maxEnd[i], q.maxEnd[i-1])
			}
		}
		o.queue[dev] = q
	}
}

// callRange returns the [lo, hi) of calls that thread th started inside s.
func (o *OwnershipFacts) callRange(th trace.Index, s trace.Span) (int, int) {
	r, ok := o.thread[th]
	if !ok {
		return 0, 0
	}
	// The first start at or after each bound, as sort.Search found it.
	lo, hi := o.starts.firstFrom(r[0], r[1], s.Start), o.starts.firstFrom(r[0], r[1], s.End)
	return lo, max(lo, hi)
}

// Totals returns the GPU time (sum of durations), the activities and the
// kernels that the interval s on thread th owns, in O(log n).
func (o *OwnershipFacts) Totals(th trace.Index, s trace.Span) (gpu trace.Duration, activities, kernels int) {
	lo, hi := o.callRange(th, s)
	return o.gpu[hi] - o.gpu[lo], int(o.activities[hi] - o.activities[lo]), int(o.kernelsBy[hi] - o.kernelsBy[lo])
}

// Activities returns the GPU activities (Trace.GPU indexes) that the
// interval s on thread th owns, in launch order.
func (o *OwnershipFacts) Activities(th trace.Index, s trace.Span) []int {
	lo, hi := o.callRange(th, s)
	var out []int
	for _, c := range o.calls[lo:hi] {
		for _, g := range o.launched[o.byCall[c]:o.byCall[c+1]] {
			out = append(out, int(g))
		}
	}
	return out
}

// Of returns what the interval s on thread th owns (see Owned).
func (o *OwnershipFacts) Of(th trace.Index, s trace.Span) Owned {
	t := o.t
	lo, hi := o.callRange(th, s)
	w := Owned{Wall: s.Dur(), Launches: hi - lo, GPUTime: o.gpu[hi] - o.gpu[lo], LaunchAPI: o.api[hi] - o.api[lo],
		Activities: int(o.activities[hi] - o.activities[lo]), Kernels: int(o.kernelsBy[hi] - o.kernelsBy[lo])}
	// The owned activities' intervals and devices, read from the calls
	// already found and kept on the stack for a range's usual few: the
	// compiled comparisons ask for every call of every repeated range.
	var spanBuf [64]interval.Bounds
	var devBuf [4]int32
	spans, devices := spanBuf[:0], devBuf[:0]
	for _, c := range o.calls[lo:hi] {
		for _, g := range o.launched[o.byCall[c]:o.byCall[c+1]] {
			a := &t.GPU[g]
			spans = append(spans, interval.Bounds{Start: a.Start, End: a.End})
			if !slices.Contains(devices, a.Device) {
				devices = append(devices, a.Device)
			}
		}
	}
	if len(spans) > 0 {
		w.Extent = trace.Span{Start: spans[0].Start, End: spans[0].End}
		for _, sp := range spans {
			w.Extent.Start, w.Extent.End = min(w.Extent.Start, sp.Start), max(w.Extent.End, sp.End)
		}
		for _, sp := range interval.UnionBounds(spans) {
			w.GPUBusy += sp.Dur()
		}
	}
	if len(devices) == 0 {
		for dev := range o.queues() {
			devices = append(devices, dev)
		}
	}
	for _, dev := range devices {
		w.QueueAtEntry = max(w.QueueAtEntry, o.QueueAt(dev, s.Start))
	}
	return w
}

// QueueAt returns how long after time at device dev still ran work
// launched before at: the latest end among those activities minus at,
// at least 0.
func (o *OwnershipFacts) QueueAt(dev int32, at trace.Time) trace.Duration {
	q := o.queues()[dev]
	if q == nil {
		return 0
	}
	i := sort.Search(len(q.at), func(i int) bool { return q.at[i] >= at })
	if i == 0 {
		return 0
	}
	return max(0, trace.Duration(q.maxEnd[i-1]-at))
}

// Ownership returns the Ownership fact (nil unless the analyzer requires
// it).
func (p *Pass) Ownership() *OwnershipFacts { return p.ix.owned }

// ownedBy returns the GPU activities the ranges spans on thread th own.
func (p *Pass) ownedBy(th trace.Index, spans []trace.Span) []int {
	var out []int
	for _, s := range spans {
		out = append(out, p.Ownership().Activities(th, s)...)
	}
	return out
}

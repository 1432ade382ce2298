package analyze

import (
	"slices"

	"github.com/tracelens/tracelens/trace"

	"cmp"

	"strings"
)

// MemoryTimelinePoints bounds the samples of a device's memory timeline:
// the events are bucketed by time and each bucket keeps its largest
// allocated total, so the peak is never lost.
const MemoryTimelinePoints = 400

// Memory is the device memory timeline, from the allocator's [memory]
// events (torch.profiler's profile_memory=True).
type Memory struct {
	// Devices has one timeline per device with allocator events, by
	// device id.
	Devices []MemoryDevice `json:"devices"`
	// StepStartAllocatedBytes is, per step, the device memory allocated
	// just before the step's first device allocator event (-1 when the
	// step has none).
	StepStartAllocatedBytes []int64 `json:"step_start_allocated_bytes"`
	// GrowthPerStepBytes is the median growth of StepStartAllocatedBytes
	// from each steady step to the next (0 with fewer than three steps).
	GrowthPerStepBytes float64 `json:"growth_per_step_bytes"`
}

// MemoryDevice is one device's memory over time and at its peak.
type MemoryDevice struct {
	Device int `json:"device"`
	// Events is the number of allocator events on the device.
	Events int `json:"events"`
	// HasReserved says the trace records the allocator's reserved total
	// ("Total Reserved"); the reserved figures are 0 otherwise.
	HasReserved bool `json:"has_reserved"`
	// Points samples allocated and reserved memory over time, at most
	// MemoryTimelinePoints, each the largest allocated total of its
	// time bucket.
	Points []MemoryPoint `json:"points"`
	// PeakAllocatedBytes is the largest allocated total, reached at
	// PeakUs (relative to the trace's first event) in the step numbered
	// PeakStep (as Steps[].Number; -1 outside every step).
	PeakAllocatedBytes int64   `json:"peak_allocated_bytes"`
	PeakUs             float64 `json:"peak_us"`
	PeakStep           int     `json:"peak_step"`
	// ReservedAtPeakBytes is the reserved total at the peak, and
	// FragmentationBytes what of it is not allocated (reserved −
	// allocated): cached blocks the allocator holds but no tensor uses.
	ReservedAtPeakBytes int64 `json:"reserved_at_peak_bytes"`
	FragmentationBytes  int64 `json:"fragmentation_bytes"`
	MaxReservedBytes    int64 `json:"max_reserved_bytes"`
	// PeakLive groups the allocations live at the peak (made in the
	// trace and not freed by then, matched by address) by the op and
	// Python line that made them, largest first.
	PeakLive []MemorySite `json:"peak_live"`
	// PeakUnattributedBytes is the part of the peak allocated before
	// the trace began (weights, optimizer state), or not matched by
	// address.
	PeakUnattributedBytes int64 `json:"peak_unattributed_bytes"`
}

// MemoryPoint is one sample of a device's memory timeline.
type MemoryPoint struct {
	AtUs           float64 `json:"at_us"`
	AllocatedBytes int64   `json:"allocated_bytes"`
	ReservedBytes  int64   `json:"reserved_bytes"`
}

// MemorySite is where allocations live at the peak were made: the
// innermost op around the allocation, with the user's Python line when
// the trace has stacks.
type MemorySite struct {
	Site   string `json:"site"`
	Op     string `json:"op"`
	Bytes  int64  `json:"bytes"`
	Blocks int    `json:"blocks"`
}

// memoryTimeline sets r.Memory when the trace has device allocator events.
func (ix *index) memoryTimeline(r *Result) {
	t := ix.t
	byDev := map[int32][]int{}
	for i, m := range t.Memory {
		if m.Device >= 0 {
			byDev[m.Device] = append(byDev[m.Device], i)
		}
	}
	if len(byDev) == 0 {
		return
	}
	mem := &Memory{StepStartAllocatedBytes: stepStartAllocated(t)}
	start := mem.StepStartAllocatedBytes
	var growth []float64
	for i := 2; i < len(start); i++ {
		if start[i] >= 0 && start[i-1] >= 0 {
			growth = append(growth, float64(start[i]-start[i-1]))
		}
	}
	if len(growth) > 0 {
		mem.GrowthPerStepBytes = median(growth)
	}
	devs := make([]int32, 0, len(byDev))
	for d := range byDev {
		devs = append(devs, d)
	}
	slices.Sort(devs)
	var ops opFinder
	for _, d := range devs {
		evs := byDev[d]
		slices.SortStableFunc(evs, func(a, b int) int { return cmp.Compare(t.Memory[a].At, t.Memory[b].At) })
		if ops == nil {
			ops = newOpFinder(t)
		}
		mem.Devices = append(mem.Devices, ix.memoryDevice(int(d), evs, ops))
	}
	r.Memory = mem
}

// memoryDevice builds one device's timeline from its events (indices into
// t.Memory, by time).
func (ix *index) memoryDevice(dev int, evs []int, ops opFinder) MemoryDevice {
	t := ix.t
	origin := ix.whole.Start
	md := MemoryDevice{Device: dev, Events: len(evs), PeakStep: -1, PeakLive: []MemorySite{}}
	peak := 0
	for k, i := range evs {
		m := &t.Memory[i]
		if m.Reserved > 0 {
			md.HasReserved = true
		}
		md.MaxReservedBytes = max(md.MaxReservedBytes, m.Reserved)
		if m.Allocated > t.Memory[evs[peak]].Allocated {
			peak = k
		}
	}
	pm := &t.Memory[evs[peak]]
	md.PeakAllocatedBytes = pm.Allocated
	if st := t.StepOf(pm.At); st >= 0 {
		md.PeakStep = t.Steps[st].Number
	}
	md.PeakUs = us(trace.Duration(pm.At - origin))
	md.ReservedAtPeakBytes = pm.Reserved
	if md.HasReserved {
		md.FragmentationBytes = max(pm.Reserved-pm.Allocated, 0)
	}
	md.Points = memoryPoints(t, evs, origin)
	var live int64
	md.PeakLive, live = ix.liveAt(evs[:peak+1], ops)
	md.PeakUnattributedBytes = max(md.PeakAllocatedBytes-live, 0)
	return md
}

// memoryPoints samples the events: all of them when few, else one point
// per time bucket, at the bucket's largest allocated total (with the
// bucket's largest reserved total).
func memoryPoints(t *trace.Trace, evs []int, origin trace.Time) []MemoryPoint {
	point := func(m *trace.MemoryEvent) MemoryPoint {
		return MemoryPoint{AtUs: us(trace.Duration(m.At - origin)), AllocatedBytes: m.Allocated, ReservedBytes: m.Reserved}
	}
	if len(evs) <= MemoryTimelinePoints {
		out := make([]MemoryPoint, len(evs))
		for k, i := range evs {
			out[k] = point(&t.Memory[i])
		}
		return out
	}
	first, last := t.Memory[evs[0]].At, t.Memory[evs[len(evs)-1]].At
	width := max(float64(last-first)/MemoryTimelinePoints, 1)
	var out []MemoryPoint
	bucket := -1
	for _, i := range evs {
		m := &t.Memory[i]
		b := min(int(float64(m.At-first)/width), MemoryTimelinePoints-1)
		if b != bucket {
			bucket = b
			out = append(out, point(m))
			continue
		}
		p := &out[len(out)-1]
		if m.Allocated > p.AllocatedBytes {
			res := max(p.ReservedBytes, m.Reserved)
			*p = point(m)
			p.ReservedBytes = res
		} else {
			p.ReservedBytes = max(p.ReservedBytes, m.Reserved)
		}
	}
	return out
}

// liveAt returns the allocations among evs (a device's events up to the
// peak, by time) that no later event in evs frees at the same address,
// grouped by where they were made, largest first, and their total.
func (ix *index) liveAt(evs []int, ops opFinder) ([]MemorySite, int64) {
	t := ix.t
	live := map[int64]int{}
	for _, i := range evs {
		m := &t.Memory[i]
		switch {
		case m.Addr == 0:
		case m.Bytes > 0:
			live[m.Addr] = i
		case m.Bytes < 0:
			delete(live, m.Addr)
		}
	}
	idx := make([]int, 0, len(live))
	for _, i := range live {
		idx = append(idx, i)
	}
	return ix.groupSites(idx, ops)
}

// groupSites groups the allocations idx (Trace.Memory indexes) by where
// they were made (the innermost op and the user's line), largest first,
// with their total.
func (ix *index) groupSites(idx []int, ops opFinder) ([]MemorySite, int64) {
	t := ix.t
	by := map[string]*MemorySite{}
	var total int64
	for _, i := range idx {
		m := &t.Memory[i]
		site := memorySite(t, ix, ops, m)
		s := by[site]
		if s == nil {
			op, _, _ := strings.Cut(site, " at ")
			s = &MemorySite{Site: site, Op: op}
			by[site] = s
		}
		s.Bytes += m.Bytes
		s.Blocks++
		total += m.Bytes
	}
	out := make([]MemorySite, 0, len(by))
	for _, s := range by {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b MemorySite) int {
		if c := cmp.Compare(b.Bytes, a.Bytes); c != 0 {
			return c
		}
		return cmp.Compare(a.Site, b.Site)
	})
	return out, total
}

// stepStartAllocated returns, per step, the device memory allocated just
// before its first device allocator event (-1 when the step has none).
func stepStartAllocated(t *trace.Trace) []int64 {
	out := make([]int64, len(t.Steps))
	for i := range out {
		out[i] = -1
	}
	for _, m := range t.Memory {
		if m.Device < 0 {
			continue
		}
		if st := t.StepOf(m.At); st >= 0 && out[st] < 0 {
			out[st] = m.Allocated - m.Bytes
		}
	}
	return out
}

// opFinder finds the innermost op around a time on a thread: per thread
// the ops by start, searched by binary search, then out through parents.
type opFinder map[trace.Index][]trace.Index

func newOpFinder(t *trace.Trace) opFinder {
	f := opFinder{}
	for i := range t.Ops {
		f[t.Ops[i].Thread] = append(f[t.Ops[i].Thread], trace.Index(i))
	}
	for _, v := range f {
		slices.SortStableFunc(v, func(a, b trace.Index) int { return cmp.Compare(t.Ops[a].Start, t.Ops[b].Start) })
	}
	return f
}

// memorySite names where an allocation was made: the innermost op on its
// thread around it, with the user's Python line when the trace has one.
func memorySite(t *trace.Trace, ix *index, ops opFinder, m *trace.MemoryEvent) string {
	op := ops.at(t, m.Thread, m.At)
	if op == trace.None {
		return "(outside every op)"
	}
	name := t.Ops[op].Name
	if f := t.Ops[op].Frame; f != trace.None {
		if u := ix.userFrameOf(f); u != trace.None {
			return name + " at " + t.Frames[u].Name
		}
	}
	return name
}

// at returns the innermost op on thread th around time at, or None.
func (f opFinder) at(t *trace.Trace, th trace.Index, at trace.Time) trace.Index {
	v := f[th]
	i, _ := slices.BinarySearchFunc(v, at, func(op trace.Index, at trace.Time) int {
		if t.Ops[op].Start <= at {
			return -1
		}
		return 1
	})
	if i == 0 {
		return trace.None
	}
	for op := v[i-1]; op != trace.None; op = t.Ops[op].Parent {
		if t.Ops[op].Start <= at && at <= t.Ops[op].End {
			return op
		}
	}
	return trace.None
}

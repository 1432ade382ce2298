package ingest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/tracelens/tracelens/trace"
)

// merger appends chunk results in file order and then resolves links.
type merger struct {
	// remap[w][local] is the global thread index of worker w's thread.
	remap   [][]trace.Index
	threads map[threadKey]trace.Index
	t       *trace.Trace
	loose   []looseEvent
	meta    []metaEvent
	be      []beginEnd
	flows   []flowEvent
	catIdx  map[string]int
	skips   map[string]*skipCount
	expect  int64 // JSON size hint, 0 if unknown
	sizer   sizer
	// bytes is the model's size so far: records merged plus the names the
	// workers interned. It is what the memory budget caps.
	bytes    int64
	strBytes int64
	// clock times finish's passes (nil: not timed).
	clock *stageClock
	// gpuSorted says the reader put GPU activity in the model's order
	// itself (nsys's sortGPU), so sortAll need not check it again: a
	// serial pass over every record (0.06 s for 3.2 M kernels).
	gpuSorted bool
}

// sizer plans the model's slice allocations against the memory budget.
type sizer struct {
	budget    int64 // bytes the model's slices may plan for
	allocated int64 // bytes of capacity the model's slices hold
	// over is set when a slice could not grow within the budget: the
	// model misses events and the read must stop (*BudgetError).
	over bool
	// prefaulting counts the goroutines faulting planned capacity in.
	prefaulting sync.WaitGroup
}

// fits reports whether n more bytes of capacity stay within the budget
// (negative: none).
func (sz *sizer) fits(n int64) bool {
	return sz.budget < 0 || sz.allocated+n <= sz.budget
}

// planAfter is the fraction of the input read before appendSized trusts an
// extrapolation. Real traces are not uniform: a torch.compile trace puts
// ~6 k eager ops in its first 8 MB and then only Python frames, so a plan
// from the first 4 MiB batch asked for ~775 k ops (74 MB) and starved the
// frames, which then grew by doubling. A tenth of the input is past such
// prefixes, and doubling up to there costs little.
const planAfter = 0.1

// appendSized appends src to dst. When dst must grow after planAfter of the
// input, it grows to the size the whole input will need, extrapolated from
// the fraction read so far, so a model slice is allocated about once
// instead of log2(n) times: the copies and page faults of doubling cost
// ~20% of reading a 500 MB trace. A plan that would take the model's
// capacity past the budget falls back to growing at most twofold.
//
// The sizer counts the capacity the model's slices hold now; a growth
// that would take it past the budget is not made: sz.over is set and
// dst returned as is, and the reader stops with a *BudgetError. Checking
// after the growth let a gzip bomb's doubling slices take the process
// to 1.5× its budget (issue 27).
func appendSized[T any](sz *sizer, dst, src []T, frac float64) []T {
	need := len(dst) + len(src)
	if need <= cap(dst) {
		return append(dst, src...)
	}
	elem := int64(unsafe.Sizeof(*new(T)))
	if frac < planAfter || frac >= 1 {
		// append grows a big slice by 1.25-2×: count the worst.
		if !sz.fits(int64(max(need, 2*cap(dst))-cap(dst)) * elem) {
			sz.over = true
			return dst
		}
		nd := append(dst, src...)
		sz.allocated += int64(cap(nd)-cap(dst)) * elem
		return nd
	}
	// A quarter more than the extrapolation: events of one kind are not
	// spread evenly (none of a compile trace's 1.9 M Python frames is in
	// its first 1.5%), and planning short means a second plan and copy,
	// while capacity never written costs address space, not memory.
	want := int(float64(need)/frac*1.25) + 64
	if sz.allocated+int64(want-cap(dst))*elem > sz.budget {
		want = min(want, 2*need+1024)
	}
	if !sz.fits(int64(want-cap(dst)) * elem) {
		sz.over = true
		return dst
	}
	sz.allocated += int64(want-cap(dst)) * elem
	nd := make([]T, len(dst), want)
	// Huge pages: see adviseHugePages (14% of a compile trace's CPU went
	// to faulting these slices in 4 KiB at a time).
	adviseHugePages(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(nd))), int64(want)*elem))
	copy(nd, dst)
	nd = append(nd, src...)
	// Another core faults in (and the kernel zeroes) the pages the rest of
	// the input will fill, up to the extrapolation, ahead of the merger: it
	// is the one serial stage that writes the whole model, and page faults
	// were most of its time (12% of reading a compile trace).
	if est := min(int(float64(need)/frac), want); est > need {
		all := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(nd))), int64(want)*elem)
		ahead := all[int64(need)*elem : int64(est)*elem]
		sz.prefaulting.Add(1)
		go func() {
			defer sz.prefaulting.Done()
			prefault(ahead)
		}()
	}
	return nd
}

func newMerger(workers int, expect, budget int64) *merger {
	return &merger{
		sizer:   sizer{budget: budget},
		expect:  expect,
		remap:   make([][]trace.Index, workers),
		threads: map[threadKey]trace.Index{},
		t:       &trace.Trace{},
		catIdx:  map[string]int{},
		skips:   map[string]*skipCount{},
	}
}

func (m *merger) add(r *chunkResult) {
	rm := m.remap[r.worker]
	for _, k := range r.newThreads {
		g, ok := m.threads[k]
		if !ok {
			g = trace.Index(len(m.t.Threads))
			m.threads[k] = g
			m.t.Threads = append(m.t.Threads, trace.Thread{PID: k.pid, TID: k.tid})
		}
		rm = append(rm, g)
	}
	m.remap[r.worker] = rm
	t := m.t
	t.Events += r.events
	frac := 0.0
	if m.expect > 0 {
		frac = float64(r.end) / float64(m.expect)
	}
	t.GPU = appendSized(&m.sizer, t.GPU, r.gpu, frac)
	for i := range r.api {
		r.api[i].Thread = rm[r.api[i].Thread]
	}
	t.APICalls = appendSized(&m.sizer, t.APICalls, r.api, frac)
	for i := range r.ops {
		r.ops[i].Thread = rm[r.ops[i].Thread]
	}
	t.Ops = appendSized(&m.sizer, t.Ops, r.ops, frac)
	for i := range r.frames {
		r.frames[i].Thread = rm[r.frames[i].Thread]
	}
	t.Frames = appendSized(&m.sizer, t.Frames, r.frames, frac)
	for i := range r.annots {
		r.annots[i].Thread = rm[r.annots[i].Thread]
	}
	t.Annotations = append(t.Annotations, r.annots...)
	t.GPUAnnotations = append(t.GPUAnnotations, r.gpuAnn...)
	for i := range r.memory {
		r.memory[i].Thread = rm[r.memory[i].Thread]
	}
	t.Memory = append(t.Memory, r.memory...)
	for i := range r.loose {
		r.loose[i].thread = rm[r.loose[i].thread]
	}
	m.loose = append(m.loose, r.loose...)
	for i := range r.meta {
		if r.meta[i].kind == "thread_name" {
			r.meta[i].thread = rm[r.meta[i].thread]
		}
	}
	m.meta = append(m.meta, r.meta...)
	for i := range r.be {
		r.be[i].thread = rm[r.be[i].thread]
	}
	m.be = append(m.be, r.be...)
	for i := range r.flows {
		r.flows[i].thread = rm[r.flows[i].thread]
	}
	m.flows = appendSized(&m.sizer, m.flows, r.flows, frac)
	m.strBytes += r.strBytes
	m.bytes = m.modelBytes()
	for i, c := range r.cats {
		if j, ok := m.catIdx[c]; ok {
			t.Categories[j].Count += r.catN[i]
			continue
		}
		m.catIdx[c] = len(t.Categories)
		t.Categories = append(t.Categories, trace.CategoryCount{Category: c, Count: r.catN[i]})
	}
	for reason, c := range r.skips {
		if s, ok := m.skips[reason]; ok {
			s.count += c.count
			continue
		}
		m.skips[reason] = &skipCount{count: c.count, first: c.first}
	}
}

// modelBytes is the size of what has been merged: records by their
// length (capacity planned ahead is not data the trace needs) and names.
func (m *merger) modelBytes() int64 {
	t := m.t
	return size(t.GPU) + size(t.APICalls) + size(t.Ops) + size(t.Frames) + size(t.Annotations) +
		size(t.GPUAnnotations) + size(t.Memory) + size(t.Threads) + size(m.loose) + size(m.meta) +
		size(m.be) + size(m.flows) + m.strBytes
}

func size[T any](s []T) int64 { return int64(len(s)) * int64(unsafe.Sizeof(*new(T))) }

// budgetError says how much the whole trace needs, from the model's size
// and the fraction of the input read (0 when unknown).
func (m *merger) budgetError(budget int64, frac float64) *BudgetError {
	e := &BudgetError{Budget: budget, Events: m.t.Events, Read: frac}
	if frac > 0 {
		// Never less than what is read: the fraction is estimated from
		// bytes read ahead, and "needs 1.2 GB" with 1.3 GB read misled.
		e.Need = max(int64(float64(m.bytes)/frac), m.bytes)
	}
	return e
}

// safeFinish is finish, with a panic (a bug) returned as an error.
func (m *merger) safeFinish(top map[string][]byte) (t *trace.Trace, err error) {
	defer func() {
		if p := recover(); p != nil {
			t, err = nil, fmt.Errorf("internal error linking events: %v", p)
		}
	}()
	return m.finish(top), nil
}

// finish classifies dialect-specific events, sorts, and resolves links.
func (m *merger) finish(top map[string][]byte) *trace.Trace {
	t := m.t
	m.pairBeginEnd()
	m.metadata(top)
	m.names()
	m.classifyLoose()
	m.clock.mark("finish: classify")
	m.sortAll()
	m.clock.mark("finish: sort")
	m.linkLaunches()
	m.clock.mark("finish: link launches")
	// nest writes ops' and API calls' links, frameParents frames'
	// parents: neither reads what the other writes.
	concurrently(func() {
		m.nest()
		m.clock.mark("finish: nest")
	}, func() {
		m.frameParents()
		m.clock.mark("finish: frame parents")
	})
	m.steps()
	for reason, c := range m.skips {
		t.Skipped = append(t.Skipped, trace.Skip{Reason: reason, Count: c.count, FirstOffset: c.first})
	}
	slices.SortFunc(t.Skipped, func(a, b trace.Skip) int { return strings.Compare(a.Reason, b.Reason) })
	return t
}

func (m *merger) skipAt(reason string, off int64) {
	if s, ok := m.skips[reason]; ok {
		s.count++
		s.first = min(s.first, off)
		return
	}
	m.skips[reason] = &skipCount{count: 1, first: off}
}

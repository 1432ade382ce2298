// Package tracetest builds linked trace models in Go for tests, so an
// analyzer's test states its trace in a few lines instead of a JSON
// fixture: steps, host ops, record_function ranges and Python frames,
// runtime launches linked to their kernels and copies by correlation id,
// streams and allocator events.
//
// A Builder works on one host thread and one device at a time (Thread and
// Device switch them). Build sorts every slice as the readers do and
// resolves the links the readers resolve (launch ↔ GPU activity, op and
// frame parents, the op and frame around every API call), so analyzers
// read a built trace exactly as they read an ingested one. Times are
// nanoseconds; Us converts microseconds, the unit tests think in.
package tracetest

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/tracelens/tracelens/trace"
)

// Us returns us microseconds as a trace.Time.
func Us(us float64) trace.Time { return trace.Time(us * 1e3) }

// Builder accumulates events; Build turns them into a trace.Trace.
type Builder struct {
	t      trace.Trace
	thread trace.Index
	device int32
	stream int32
	corr   int64
	pyID   int64
}

// New returns a builder of a PyTorch (Kineto) trace with one host thread
// ("python", its current thread) and device 0 on stream 7 current.
func New() *Builder {
	b := &Builder{stream: 7}
	b.t.Meta = trace.Metadata{Format: "kineto", Framework: "PyTorch"}
	b.t.Threads = []trace.Thread{{PID: "1", TID: "1", Name: "python"}}
	return b
}

// Meta lets a test set what the trace says about itself (framework, device
// properties) before more events.
func (b *Builder) Meta(set func(*trace.Metadata)) *Builder {
	set(&b.t.Meta)
	return b
}

// Thread makes the host thread called name current, adding it when new.
func (b *Builder) Thread(name string) *Builder {
	for i, th := range b.t.Threads {
		if th.Name == name {
			b.thread = trace.Index(i)
			return b
		}
	}
	b.t.Threads = append(b.t.Threads, trace.Thread{PID: "1", TID: fmt.Sprint(len(b.t.Threads) + 1), Name: name})
	b.thread = trace.Index(len(b.t.Threads) - 1)
	return b
}

// Device makes device dev and its stream current for the GPU activities
// that follow.
func (b *Builder) Device(dev, stream int32) *Builder {
	b.device, b.stream = dev, stream
	return b
}

// Step adds ProfilerStep#n over [start, end) on the current thread (n
// counts the steps added so far).
func (b *Builder) Step(start, end trace.Time) *Builder {
	n := len(b.t.Steps)
	name := fmt.Sprintf("ProfilerStep#%d", n)
	b.t.Steps = append(b.t.Steps, trace.Step{Span: trace.Span{Name: name, Start: start, End: end}, Number: n})
	b.t.Annotations = append(b.t.Annotations, trace.Annotation{Span: trace.Span{Name: name, Start: start, End: end}, Thread: b.thread})
	return b
}

// Range adds a record_function range on the current thread.
func (b *Builder) Range(name string, start, end trace.Time) *Builder {
	b.t.Annotations = append(b.t.Annotations, trace.Annotation{Span: trace.Span{Name: name, Start: start, End: end}, Thread: b.thread})
	return b
}

// Frame adds a Python frame ("model.py(42): forward") on the current
// thread; its parent is the innermost frame around it.
func (b *Builder) Frame(name string, start, end trace.Time) *Builder {
	b.pyID++
	b.t.Frames = append(b.t.Frames, trace.PyFrame{Span: trace.Span{Name: name, Start: start, End: end}, Thread: b.thread, Parent: trace.None, PyID: b.pyID})
	return b
}

// Op adds a framework op on the current thread and returns it, to give it
// input shapes (Inputs).
func (b *Builder) Op(name string, start, end trace.Time) *Op {
	b.t.Ops = append(b.t.Ops, trace.Op{Span: trace.Span{Name: name, Start: start, End: end}, Thread: b.thread, Parent: trace.None, Frame: trace.None})
	return &Op{b: b, i: len(b.t.Ops) - 1}
}

// Op is a framework op being built.
type Op struct {
	b *Builder
	i int
}

// Inputs sets the op's input dims and types as the profiler writes them
// ("[[64, 128], [128, 256]]", `["float", "float"]`).
func (o *Op) Inputs(dims, types string) *Builder {
	o.b.t.Ops[o.i].InputDims, o.b.t.Ops[o.i].InputTypes = dims, types
	return o.b
}

// API adds a runtime or driver call that launches nothing (a
// synchronisation, cudaMalloc) on the current thread.
func (b *Builder) API(name string, start, end trace.Time) *Builder {
	b.t.APICalls = append(b.t.APICalls, b.call(name, start, end, 0))
	return b
}

// Launch adds a launch call on the current thread; the activities added
// through it carry its correlation id.
func (b *Builder) Launch(name string, start, end trace.Time) *Launch {
	b.corr++
	b.t.APICalls = append(b.t.APICalls, b.call(name, start, end, b.corr))
	return &Launch{b: b, corr: b.corr}
}

func (b *Builder) call(name string, start, end trace.Time, corr int64) trace.APICall {
	return trace.APICall{Span: trace.Span{Name: name, Start: start, End: end}, Thread: b.thread, Correlation: corr,
		Driver: len(name) > 2 && name[:2] == "cu" && (len(name) < 4 || name[:4] != "cuda"),
		Op:     trace.None, Frame: trace.None, FirstGPU: trace.None}
}

// Launch is a launch call being built.
type Launch struct {
	b    *Builder
	corr int64
}

// Kernel adds a kernel it launched, on the current device and stream.
func (l *Launch) Kernel(name string, start, end trace.Time) *Builder {
	l.b.gpu(trace.GPUActivity{Span: trace.Span{Name: name, Start: start, End: end}, Kind: trace.Kernel, Correlation: l.corr})
	return l.b
}

// Copy adds a memcpy it launched of bytes from src to dst memory.
func (l *Launch) Copy(kind trace.CopyKind, src, dst trace.MemKind, bytes int64, start, end trace.Time) *Builder {
	l.b.gpu(trace.GPUActivity{Span: trace.Span{Name: fmt.Sprintf("Memcpy %s (%s -> %s)", kind, src, dst), Start: start, End: end}, Kind: trace.Memcpy,
		Correlation: l.corr, Copy: kind, Src: src, Dst: dst, Bytes: bytes})
	return l.b
}

// Kernel adds a kernel with no launch call (one the device records alone).
func (b *Builder) Kernel(name string, start, end trace.Time) *Builder {
	b.gpu(trace.GPUActivity{Span: trace.Span{Name: name, Start: start, End: end}, Kind: trace.Kernel})
	return b
}

func (b *Builder) gpu(g trace.GPUActivity) {
	g.Device, g.Stream, g.Launch, g.Occupancy = b.device, b.stream, trace.None, -1
	b.t.GPU = append(b.t.GPU, g)
}

// LastGPU lets a test set what the builder has no method for (launch
// configuration, occupancy) on the GPU activity added last.
func (b *Builder) LastGPU(set func(*trace.GPUActivity)) *Builder {
	set(&b.t.GPU[len(b.t.GPU)-1])
	return b
}

// Alloc adds an allocator event on the current device: bytes > 0 an
// allocation at addr, < 0 its free; allocated is the total after it.
func (b *Builder) Alloc(at trace.Time, bytes, addr, allocated int64) *Builder {
	b.t.Memory = append(b.t.Memory, trace.MemoryEvent{At: at, Thread: b.thread, Device: b.device, Bytes: bytes, Allocated: allocated, Addr: addr})
	return b
}

// AllocReserved is Alloc with the allocator's reserved total after the
// event (profile_memory's "Total Reserved").
func (b *Builder) AllocReserved(at trace.Time, bytes, addr, allocated, reserved int64) *Builder {
	b.Alloc(at, bytes, addr, allocated)
	b.t.Memory[len(b.t.Memory)-1].Reserved = reserved
	return b
}

// Build returns the trace: sorted and linked as ingest leaves a trace. The
// builder may go on adding events for another Build.
func (b *Builder) Build() *trace.Trace {
	t := b.t
	t.GPU = slices.Clone(t.GPU)
	t.APICalls, t.Ops, t.Frames = slices.Clone(t.APICalls), slices.Clone(t.Ops), slices.Clone(t.Frames)
	t.Annotations, t.Memory = slices.Clone(t.Annotations), slices.Clone(t.Memory)
	t.Steps, t.Threads = slices.Clone(t.Steps), slices.Clone(t.Threads)
	slices.SortStableFunc(t.GPU, func(a, c trace.GPUActivity) int {
		return cmp.Or(cmp.Compare(a.Device, c.Device), cmp.Compare(a.Stream, c.Stream), bySpan(a.Span, c.Span))
	})
	slices.SortStableFunc(t.APICalls, func(a, c trace.APICall) int { return byThread(a.Thread, c.Thread, a.Span, c.Span) })
	slices.SortStableFunc(t.Ops, func(a, c trace.Op) int { return byThread(a.Thread, c.Thread, a.Span, c.Span) })
	slices.SortStableFunc(t.Frames, func(a, c trace.PyFrame) int { return byThread(a.Thread, c.Thread, a.Span, c.Span) })
	slices.SortStableFunc(t.Annotations, func(a, c trace.Annotation) int { return byThread(a.Thread, c.Thread, a.Span, c.Span) })
	slices.SortStableFunc(t.Steps, func(a, c trace.Step) int { return bySpan(a.Span, c.Span) })
	slices.SortStableFunc(t.Memory, func(a, c trace.MemoryEvent) int { return cmp.Compare(a.At, c.At) })
	link(&t)
	t.Events = len(t.GPU) + len(t.APICalls) + len(t.Ops) + len(t.Frames) + len(t.Annotations) + len(t.Memory)
	return &t
}

// link resolves what the readers resolve: each activity's launch call and
// each call's first activity, and per thread the innermost op and frame
// around every op, frame and API call. Quadratic: test traces are small.
func link(t *trace.Trace) {
	byCorr := map[int64]trace.Index{}
	for i, c := range t.APICalls {
		if c.Correlation != 0 {
			byCorr[c.Correlation] = trace.Index(i)
		}
	}
	for i := range t.GPU {
		g := &t.GPU[i]
		if a, ok := byCorr[g.Correlation]; ok && g.Correlation != 0 {
			g.Launch = a
			if first := t.APICalls[a].FirstGPU; first == trace.None || t.GPU[first].Start > g.Start {
				t.APICalls[a].FirstGPU = trace.Index(i)
			}
		}
	}
	for i := range t.Frames {
		f := &t.Frames[i]
		f.Parent = innermost(t.Frames[:i], f.Thread, f.Span, func(p *trace.PyFrame) (trace.Index, trace.Span) { return p.Thread, p.Span })
		if f.Parent != trace.None {
			f.PyParentID = t.Frames[f.Parent].PyID
		}
	}
	opAt := func(o *trace.Op) (trace.Index, trace.Span) { return o.Thread, o.Span }
	frameAt := func(f *trace.PyFrame) (trace.Index, trace.Span) { return f.Thread, f.Span }
	for i := range t.Ops {
		o := &t.Ops[i]
		o.Parent = innermost(t.Ops[:i], o.Thread, o.Span, opAt)
		o.Frame = innermost(t.Frames, o.Thread, o.Span, frameAt)
	}
	for i := range t.APICalls {
		c := &t.APICalls[i]
		c.Op = innermost(t.Ops, c.Thread, c.Span, opAt)
		c.Frame = innermost(t.Frames, c.Thread, c.Span, frameAt)
	}
}

// innermost returns the last of among (in nesting order) on thread th that
// contains s, or trace.None.
func innermost[T any](among []T, th trace.Index, s trace.Span, at func(*T) (trace.Index, trace.Span)) trace.Index {
	for i := len(among) - 1; i >= 0; i-- {
		if t, sp := at(&among[i]); t == th && sp.Contains(s) {
			return trace.Index(i)
		}
	}
	return trace.None
}

// bySpan orders by start, the longer first, as the readers do (a parent
// before its children).
func bySpan(a, b trace.Span) int {
	return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(b.End, a.End))
}

func byThread(ta, tb trace.Index, a, b trace.Span) int {
	return cmp.Or(cmp.Compare(ta, tb), bySpan(a, b))
}

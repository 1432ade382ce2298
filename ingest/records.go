package ingest

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tracelens/tracelens/trace"
)

// looseEvent is a complete event without a category (Perfetto/JAX
// dialect): what it is depends on process and thread names that may appear
// anywhere in the file, so it is classified after reading.
type looseEvent struct {
	trace.Span
	thread      trace.Index // worker-local until merged
	correlation int64
	hasCorr     bool
	details     string // kernel_details or memcpy_details
	memcpy      bool
}

// beginEnd is one half of a B/E duration pair (Chrome JSON's other way to
// write a span); pairs are matched per thread after reading.
type beginEnd struct {
	thread      trace.Index
	ts          trace.Time
	name        string
	begin       bool
	correlation int64
	hasCorr     bool
	off         int64
}

type metaEvent struct {
	kind   string // process_name, thread_name
	thread trace.Index
	pid    string
	name   string
}

type flowEvent struct {
	id     int64
	ts     trace.Time
	thread trace.Index
	start  bool
}

// apiCall models a CUDA runtime or driver call (driver: a driver API
// call), with the correlation id its GPU work carries.
func (w *worker) apiCall(r *chunkResult, f *fields, span trace.Span, driver bool) {
	a := trace.APICall{Span: span, Op: trace.None, Frame: trace.None, FirstGPU: trace.None}
	a.Name = w.intern(f.name)
	a.Thread = w.thread(f.pid, f.tid)
	a.Driver = driver
	w.forArgs(f, func(k string, v argValue) {
		switch k {
		case "correlation":
			a.Correlation, _ = parseInt(string(v))
		case "External id", "external id":
			a.ExternalID, _ = parseInt(string(v))
		}
	})
	r.api = append(r.api, a)
}

// op models a CPU operator, with the shapes, types and flops Kineto
// records for it.
func (w *worker) op(r *chunkResult, f *fields, span trace.Span) {
	o := trace.Op{Span: span, Parent: trace.None, Frame: trace.None}
	o.Name = w.intern(f.name)
	o.Thread = w.thread(f.pid, f.tid)
	w.forArgs(f, func(k string, v argValue) {
		switch k {
		case "External id", "external id":
			o.ExternalID, _ = parseInt(string(v))
		case "Input Dims", "Input dims":
			o.InputDims = w.intern(string(v))
		case "Input type":
			o.InputTypes = w.intern(string(v))
		case "flops":
			o.Flops = v.res().Float()
		}
	})
	r.ops = append(r.ops, o)
}

// pyFrame models a Python function frame, with the ids that link it to
// its caller.
func (w *worker) pyFrame(r *chunkResult, f *fields, span trace.Span) {
	p := trace.PyFrame{Span: span, Parent: trace.None}
	p.Name = w.intern(f.name)
	p.Thread = w.thread(f.pid, f.tid)
	w.forArgs(f, func(k string, v argValue) {
		switch k {
		case "Python id":
			p.PyID, _ = parseInt(string(v))
		case "Python parent id":
			p.PyParentID, _ = parseInt(string(v)) // null stays 0
		}
	})
	r.frames = append(r.frames, p)
}

// gpuAnnotation models a user annotation's range on a GPU stream (pid is
// the device, tid the stream).
func (w *worker) gpuAnnotation(r *chunkResult, f *fields, span trace.Span) {
	a := trace.Annotation{Span: span, Thread: trace.None, GPU: true}
	a.Name = w.intern(f.name)
	dev, _ := parseInt(f.pid)
	a.Device = int32(dev)
	a.Stream = streamNumber(f.tid)
	r.gpuAnn = append(r.gpuAnn, a)
}

// loose keeps a complete event without a category (Perfetto/JAX
// exports) with the correlation and details its args may hold; what it
// is is decided after reading (see looseEvent).
func (w *worker) loose(r *chunkResult, f *fields, span trace.Span) {
	e := looseEvent{Span: span}
	e.Name = w.intern(f.name)
	e.thread = w.thread(f.pid, f.tid)
	w.forArgs(f, func(k string, v argValue) {
		switch k {
		case "correlation_id", "correlation":
			e.correlation, e.hasCorr = parseInt(scalarText(v.res()))
		case "kernel_details":
			e.details = w.intern(v.res().Str)
		case "memcpy_details":
			e.details = w.intern(v.res().Str)
			e.memcpy = true
		}
	})
	r.loose = append(r.loose, e)
}

// argValue is the raw text of one args member. Most members are ignored
// or need only their text; the few read as numbers or strings are decoded
// by gjson on demand, exactly as gjson's own iteration would.
type argValue string

func (v argValue) res() gjson.Result { return gjson.Parse(string(v)) }

// forArgs calls fn for each member of the event's args object (if any).
func (w *worker) forArgs(f *fields, fn func(k string, v argValue)) {
	if f.argsWalked {
		for _, m := range f.argv[:f.argc] {
			fn(m.key, argValue(m.raw))
		}
		return
	}
	args := f.args
	if args == "" {
		return
	}
	if w.slow {
		slowMembers(args, func(k, raw string) { fn(k, argValue(raw)) })
		return
	}
	forMembers(args, func(k, raw string) { fn(k, argValue(raw)) })
}

// slowMembers is gjson's member iteration, the fast path's reference.
func slowMembers(obj string, fn func(k, raw string)) {
	gjson.Parse(obj).ForEach(func(k, v gjson.Result) bool {
		fn(k.Str, v.Raw)
		return true
	})
}

// streamNumber reads a stream id from a tid: 7, "7" or legacy "stream 7".
func streamNumber(tid string) int32 {
	tid = strings.TrimPrefix(strings.TrimSpace(tid), "stream ")
	n, _ := parseInt(tid)
	return int32(n)
}

func (w *worker) gpu(r *chunkResult, f *fields, span trace.Span, kind trace.GPUKind) {
	g := trace.GPUActivity{Span: span, Kind: kind, Launch: trace.None, Occupancy: -1}
	g.Name = w.intern(f.name)
	dev, _ := parseInt(f.pid)
	g.Device = int32(dev)
	g.Stream = streamNumber(f.tid)
	w.forArgs(f, func(k string, v argValue) {
		switch k {
		case "device":
			g.Device = int32(v.res().Int())
		case "stream":
			g.Stream = int32(v.res().Int())
		case "correlation":
			g.Correlation, _ = parseInt(string(v))
		case "External id", "external id":
			g.ExternalID, _ = parseInt(string(v))
		case "registers per thread":
			g.Registers = int32(v.res().Int())
		case "shared memory":
			g.SharedMem = int32(v.res().Int())
		case "blocks per SM":
			g.BlocksPerSM = float32(v.res().Float())
		case "warps per SM":
			g.WarpsPerSM = float32(v.res().Float())
		case "est. achieved occupancy %":
			g.Occupancy = float32(v.res().Float())
		case "grid":
			dim3(&g.Grid, v.res())
		case "block":
			dim3(&g.Block, v.res())
		case "bytes":
			g.Bytes = v.res().Int()
		}
	})
	if kind == trace.Memcpy {
		g.Copy, g.Src, g.Dst = parseMemcpyName(g.Name)
	}
	r.gpu = append(r.gpu, g)
}

func dim3(d *[3]int32, v gjson.Result) {
	i := 0
	v.ForEach(func(_, x gjson.Result) bool {
		if i < 3 {
			d[i] = int32(x.Int())
		}
		i++
		return i < 3
	})
}

// parseMemcpyName reads Kineto's "Memcpy HtoD (Pageable -> Device)".
func parseMemcpyName(name string) (trace.CopyKind, trace.MemKind, trace.MemKind) {
	var kind trace.CopyKind
	for k := trace.HtoD; k <= trace.PtoP; k++ {
		if strings.Contains(name, k.String()) {
			kind = k
			break
		}
	}
	var src, dst trace.MemKind
	if open := strings.IndexByte(name, '('); open >= 0 {
		inner := strings.TrimSuffix(name[open+1:], ")")
		if a, b, ok := strings.Cut(inner, " -> "); ok {
			src, dst = memKind(a), memKind(b)
		}
	}
	return kind, src, dst
}

func memKind(s string) trace.MemKind {
	for k := trace.Pageable; k <= trace.Managed; k++ {
		if strings.EqualFold(strings.TrimSpace(s), k.String()) {
			return k
		}
	}
	return trace.MemUnknown
}

func (w *worker) metadata(r *chunkResult, f *fields) {
	switch f.name {
	case "process_name", "thread_name":
		name := gjson.Get(f.args, "name")
		m := metaEvent{kind: "process_name", pid: w.intern(f.pid), name: w.intern(name.Str)}
		if f.name == "thread_name" {
			m.kind = "thread_name"
			m.thread = w.thread(f.pid, f.tid)
		}
		r.meta = append(r.meta, m)
	}
}

func (w *worker) flow(r *chunkResult, f *fields, off int64) {
	id, ok := parseInt(f.id)
	ts, err := parseMicrosToNanos(f.ts)
	if !ok || err != nil {
		w.skip(r, "flow event without numeric id or ts", off)
		return
	}
	w.countCat(r, f.cat)
	r.flows = append(r.flows, flowEvent{id: id, ts: trace.Time(ts), thread: w.thread(f.pid, f.tid), start: f.ph == "s"})
}

func (w *worker) instant(r *chunkResult, f *fields, off int64) {
	if f.name != "[memory]" {
		w.skip(r, "instant events other than [memory]", off)
		return
	}
	w.countCat(r, "[memory]")
	ts, err := parseMicrosToNanos(f.ts)
	if err != nil {
		w.skip(r, "ts missing or not a number", off)
		return
	}
	m := trace.MemoryEvent{At: trace.Time(ts), Thread: w.thread(f.pid, f.tid), Device: -1}
	devType := int64(0)
	w.forArgs(f, func(k string, v argValue) {
		switch k {
		case "Device Id":
			m.Device = int32(v.res().Int())
		case "Device Type":
			devType = v.res().Int()
		case "Bytes":
			m.Bytes = v.res().Int()
		case "Total Allocated":
			m.Allocated = v.res().Int()
		case "Total Reserved":
			m.Reserved = v.res().Int()
		case "Addr":
			m.Addr = v.res().Int()
		}
	})
	if devType == 0 {
		m.Device = -1 // CPU allocator
	}
	r.memory = append(r.memory, m)
}

func (w *worker) beginEnd(r *chunkResult, f *fields, off int64) {
	if f.cat == "" {
		w.countCat(r, "(none)")
	} else {
		w.countCat(r, f.cat)
	}
	ts, err := parseMicrosToNanos(f.ts)
	if !f.hasTs || err != nil {
		w.skip(r, "ts missing or not a number", off)
		return
	}
	e := beginEnd{thread: w.thread(f.pid, f.tid), ts: trace.Time(ts), begin: f.ph == "B", off: off}
	if e.begin {
		e.name = w.intern(f.name)
		w.forArgs(f, func(k string, v argValue) {
			if k == "correlation_id" || k == "correlation" {
				e.correlation, e.hasCorr = parseInt(scalarText(v.res()))
			}
		})
	}
	r.be = append(r.be, e)
}

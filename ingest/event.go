package ingest

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/tracelens/tracelens/trace"
)

// threadKey names a host thread or device lane as the trace spells it.
type threadKey struct{ pid, tid string }

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

type skipCount struct {
	count int
	first int64
}

// chunkResult is what one worker made of one batch. Thread fields of its
// records are indexes into the worker's thread table until merged.
type chunkResult struct {
	seq    int
	worker int
	events int
	gpu    []trace.GPUActivity
	api    []trace.APICall
	ops    []trace.Op
	frames []trace.PyFrame
	annots []trace.Annotation
	gpuAnn []trace.Annotation
	loose  []looseEvent
	be     []beginEnd
	meta   []metaEvent
	flows  []flowEvent
	memory []trace.MemoryEvent
	cats   []string // categories in first-seen order
	catN   []int
	skips  map[string]*skipCount
	// strBytes is the memory of the names this batch interned.
	strBytes int64
	// newThreads are the threads this batch added to the worker's table,
	// copied: the worker goes on appending to its table while the merger
	// reads this result.
	newThreads []threadKey
	// end is the absolute offset just past the batch's last event.
	end int64
	// err reports a bug hit while parsing (a recovered panic): the read
	// fails with it instead of crashing the process from a goroutine.
	err error
}

// worker parses batches. Each has its own string table and thread table, so
// workers share nothing while parsing.
type worker struct {
	id   int
	strs map[string]string
	// slow reads every event with gjson (the fast path's reference).
	slow bool
	// strBytes counts interned names' memory (text, header, map entry)
	// for the memory budget.
	strBytes int64
	threads  map[threadKey]trace.Index
	keys     []threadKey
	lastKey  threadKey
	lastIdx  trace.Index
	catIdx   map[string]int
	// lastCat is the index in the batch's cats of the last category
	// counted (-1: none yet in this batch).
	lastCat int
	// last batch's record counts: the next batch is sized like it, which
	// saves growing every slice from zero.
	hint struct{ gpu, api, ops, frames, flows int }
	// spare receives results whose records the merger has copied.
	spare chan *chunkResult
	// region is the buffer direct batches are read into.
	region []byte
	// clock counts results allocated rather than reused (nil: not timed).
	clock *stageClock
}

func newWorker(id int, spare chan *chunkResult) *worker {
	return &worker{id: id, strs: make(map[string]string, 1024), threads: map[threadKey]trace.Index{}, lastIdx: trace.None, lastCat: -1, spare: spare}
}

// intern returns a copy of s that does not point into the read buffer,
// shared by every equal name this worker has seen.
func (w *worker) intern(s string) string {
	if v, ok := w.strs[s]; ok {
		return v
	}
	v := strings.Clone(s)
	w.strs[v] = v
	w.strBytes += int64(len(v)) + 48
	return v
}

func (w *worker) thread(pid, tid string) trace.Index {
	if w.lastIdx != trace.None && pid == w.lastKey.pid && tid == w.lastKey.tid {
		return w.lastIdx
	}
	k := threadKey{pid, tid}
	idx, ok := w.threads[k]
	if !ok {
		k = threadKey{w.intern(pid), w.intern(tid)}
		idx = trace.Index(len(w.keys))
		w.threads[k] = idx
		w.keys = append(w.keys, k)
	}
	w.lastKey, w.lastIdx = w.keys[idx], idx
	return idx
}

func (w *worker) skip(r *chunkResult, reason string, off int64) {
	if r.skips == nil {
		r.skips = map[string]*skipCount{}
	}
	if c, ok := r.skips[reason]; ok {
		c.count++
		return
	}
	r.skips[reason] = &skipCount{count: 1, first: off}
}

func (w *worker) countCat(r *chunkResult, cat string) {
	// Runs of one category are the rule (2 M python_function events in a
	// compile trace): comparing with the last one spares a map lookup.
	if w.lastCat >= 0 && cat == r.cats[w.lastCat] {
		r.catN[w.lastCat]++
		return
	}
	if w.catIdx == nil {
		w.catIdx = map[string]int{}
	}
	// catIdx is per batch: reset by parse.
	i, ok := w.catIdx[cat]
	if !ok {
		i = len(r.cats)
		w.catIdx[w.intern(cat)] = i
		r.cats = append(r.cats, w.intern(cat))
		r.catN = append(r.catN, 0)
	}
	r.catN[i]++
	w.lastCat = i
}

// bstr views b as a string without copying; the result must not outlive
// the batch buffer (everything kept goes through intern or a number parse).
func bstr(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// safeParse is parse, with a panic turned into the result's error: a
// worker goroutine's panic would otherwise end the process, which no
// caller could recover.
func (w *worker) safeParse(b *batch) (r *chunkResult) {
	defer func() {
		if p := recover(); p != nil {
			r = &chunkResult{seq: b.seq, worker: w.id, err: fmt.Errorf("internal error reading the events at byte %d: %v", b.base, p)}
		}
	}()
	return w.parse(b)
}

// parse turns one batch into records.
func (w *worker) parse(b *batch) *chunkResult {
	var r *chunkResult
	select {
	case old := <-w.spare:
		// A result the merger has copied out: reuse its slices, which saves
		// faulting in and collecting as much memory as the model itself.
		r = &chunkResult{seq: b.seq, worker: w.id, gpu: old.gpu[:0], api: old.api[:0], ops: old.ops[:0],
			frames: old.frames[:0], flows: old.flows[:0], loose: old.loose[:0]}
	default:
		w.clock.count("parse: new results")
		h := &w.hint
		r = &chunkResult{seq: b.seq, worker: w.id,
			gpu:    make([]trace.GPUActivity, 0, h.gpu+h.gpu/4),
			api:    make([]trace.APICall, 0, h.api+h.api/4),
			ops:    make([]trace.Op, 0, h.ops+h.ops/4),
			frames: make([]trace.PyFrame, 0, h.frames+h.frames/4),
			flows:  make([]flowEvent, 0, h.flows+h.flows/4),
		}
	}
	clear(w.catIdx)
	w.lastCat = -1
	known := len(w.keys)
	if b.src != nil {
		var err error
		if b, err = w.readRegion(b); err != nil {
			r.err = err
			return r
		}
	}
	if b.spans == nil && b.cutEnd > 0 {
		n, last, err := w.cutEvents(r, b)
		if err != nil {
			r.err = err
			return r
		}
		r.events = n
		r.end = b.base + int64(last)
	} else {
		for i := 0; i < len(b.spans); i += 2 {
			s := bstr(b.buf[b.spans[i]:b.spans[i+1]])
			w.event(r, s, b.base+int64(b.spans[i]))
		}
		r.events = len(b.spans) / 2
		if n := len(b.spans); n > 0 {
			r.end = b.base + int64(b.spans[n-1])
		}
	}
	r.strBytes, w.strBytes = w.strBytes, 0
	r.newThreads = append([]threadKey(nil), w.keys[known:]...)
	h := &w.hint
	h.gpu, h.api, h.ops, h.frames, h.flows = len(r.gpu), len(r.api), len(r.ops), len(r.frames), len(r.flows)
	return r
}

// fields of one event, viewed in the batch buffer.
type fields struct {
	ph, cat, name string
	pid, tid      string
	ts, dur       string
	id            string
	args          string
	// argsWalked says that argv[:argc] are the members of args, walked
	// by objectFields; otherwise forArgs walks args itself.
	argsWalked    bool
	argc          int
	argv          [maxArgMembers]argMember
	nameNotString bool
	hasTs, hasDur bool
	durNotNumber  bool
	tsNotNumber   bool
}

func scalarText(v gjson.Result) string {
	if v.Type == gjson.String {
		return v.Str
	}
	return v.Raw
}

func (w *worker) event(r *chunkResult, s string, off int64) {
	if len(s) == 0 || s[0] != '{' {
		w.skip(r, "event is not a JSON object", off)
		return
	}
	if badEscapeIn(r, s, off) {
		return
	}
	var f fields
	if w.slow || !fastFields(s, &f) {
		if at, want := misshapenMember(s); at >= 0 {
			if r.err == nil {
				found := "the event's end"
				if at < len(s) {
					found = fmt.Sprintf("%q", s[at])
				}
				r.err = &SyntaxError{Offset: off + int64(at), Msg: fmt.Sprintf("expected %s in an event, found %s", want, found)}
			}
			return
		}
		f = fields{}
		slowFields(s, &f)
	}
	w.dispatch(r, &f, off)
}

// badEscapeIn reports whether the event text s (at byte off of the
// input) holds an invalid escape, recording the first as r's error: gjson
// decoded "\q" by cutting the string short there, and a kernel name
// silently lost its tail. A bytewise search finds most events free of
// backslashes at once.
func badEscapeIn(r *chunkResult, s string, off int64) bool {
	i := strings.IndexByte(s, '\\')
	if i < 0 {
		return false
	}
	at := badEscape(s, i)
	if at < 0 {
		return false
	}
	if r.err == nil {
		r.err = &SyntaxError{Offset: off + int64(at), Msg: fmt.Sprintf("invalid escape %s in a string (JSON allows \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)", s[at:min(at+2, len(s))])}
	}
	return true
}

// slowFields is the gjson reading of an event's fields: the reference the
// fast path must match, and what reads events the fast path declines.
func slowFields(s string, f *fields) {
	gjson.Parse(s).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "ph":
			f.ph = v.Str
		case "cat":
			f.cat = v.Str
		case "name":
			if v.Type == gjson.String {
				f.name = v.Str
			} else {
				f.nameNotString = true
			}
		case "pid":
			f.pid = scalarText(v)
		case "tid":
			f.tid = scalarText(v)
		case "ts":
			f.hasTs = true
			if v.Type == gjson.Number {
				f.ts = v.Raw
			} else {
				f.tsNotNumber = true
			}
		case "dur":
			f.hasDur = true
			if v.Type == gjson.Number {
				f.dur = v.Raw
			} else {
				f.durNotNumber = true
			}
		case "id":
			f.id = scalarText(v)
		case "args":
			if v.Type == gjson.JSON {
				f.args = v.Raw
			}
		}
		return true
	})
}

// dispatch models the event by its phase.
func (w *worker) dispatch(r *chunkResult, f *fields, off int64) {
	switch f.ph {
	case "X":
		w.complete(r, f, off)
	case "M":
		w.metadata(r, f)
	case "s", "f", "t":
		if f.cat == "ac2g" || f.cat == "async_cpu_to_gpu" || f.cat == "async" {
			w.flow(r, f, off)
		} else {
			w.countCat(r, "flow:"+f.cat)
			w.skip(r, "flow events other than ac2g", off)
		}
	case "i", "I":
		w.instant(r, f, off)
	case "B", "E":
		w.beginEnd(r, f, off)
	case "":
		w.skip(r, "event without ph", off)
	default:
		w.skip(r, "phase "+f.ph+" not modelled", off)
	}
}

// complete models an "X" (complete) event by its category once its
// times are checked; each modelled category has a method of its own.
func (w *worker) complete(r *chunkResult, f *fields, off int64) {
	cat := f.cat
	if cat == "" {
		w.countCat(r, "(none)")
	} else {
		w.countCat(r, cat)
	}
	span, reason := completeSpan(f)
	if reason != "" {
		w.skip(r, reason, off)
		return
	}
	switch cat {
	case "kernel", "Kernel":
		w.gpu(r, f, span, trace.Kernel)
	case "gpu_memcpy", "Memcpy":
		w.gpu(r, f, span, trace.Memcpy)
	case "gpu_memset", "Memset":
		w.gpu(r, f, span, trace.Memset)
	case "cuda_runtime", "Runtime", "cuda_driver", "Driver":
		w.apiCall(r, f, span, cat == "cuda_driver" || cat == "Driver")
	case "cpu_op", "Operator", "operator":
		w.op(r, f, span)
	case "python_function":
		w.pyFrame(r, f, span)
	case "user_annotation", "python_annotation":
		a := trace.Annotation{Span: span}
		a.Name = w.intern(f.name)
		a.Thread = w.thread(f.pid, f.tid)
		r.annots = append(r.annots, a)
	case "gpu_user_annotation":
		w.gpuAnnotation(r, f, span)
	case "":
		w.loose(r, f, span)
	default:
		w.skip(r, "category "+cat+" not modelled", off)
	}
}

// completeSpan is a complete event's span (its name is left to the
// caller), or why the event is skipped: a name that is not a string, or a
// ts or dur that is missing, not a number, negative or out of range.
func completeSpan(f *fields) (trace.Span, string) {
	switch {
	case f.nameNotString:
		return trace.Span{}, "name is not a string"
	case !f.hasTs || f.tsNotNumber:
		return trace.Span{}, "ts missing or not a number"
	case f.durNotNumber:
		return trace.Span{}, "dur not a number"
	}
	ts, err := parseMicrosToNanos(f.ts)
	if err != nil {
		return trace.Span{}, "ts out of range"
	}
	var dur int64
	if f.hasDur {
		if dur, err = parseMicrosToNanos(f.dur); err != nil {
			return trace.Span{}, "dur out of range"
		}
	}
	if dur < 0 {
		return trace.Span{}, "negative dur"
	}
	if ts > 0 && dur > maxTime-ts {
		// Both are within ±maxTime and ts > 0, so maxTime-ts cannot wrap (ts+dur
		// can: 2^62 + 2^62); an end past maxTime would let later
		// differences wrap.
		return trace.Span{}, "ts+dur out of range"
	}
	return trace.Span{Start: trace.Time(ts), End: trace.Time(ts + dur)}, ""
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

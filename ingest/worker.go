package ingest

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/tracelens/tracelens/trace"
)

// threadKey names a host thread or device lane as the trace spells it.
type threadKey struct{ pid, tid string }

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

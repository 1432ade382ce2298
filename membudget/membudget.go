// Package membudget caps the memory of the whole tracelens process, not
// only the estimate of one trace's model: --max-memory is a promise about
// the process's resident size, and the stages after reading (the
// analysis, the faces, a run's ranks, the TUI) grow it as much as reading
// does. A Budget is created once per process (in main) and passed to the
// stages that check it; nothing here is global.
//
// Two mechanisms enforce it. Check, called between stages and between
// analyzers, returns an *Error naming the file and the stage when the
// process is over its budget even after a collection, so the command
// exits 2 cleanly. Watch samples the resident size every few
// milliseconds and stops the process when it passes the hard limit
// (Hard, a little above the budget), for work that allocates between two
// checks (one analyzer over ten million kernels).
package membudget

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
)

// HardFactor is how far above the budget the watchdog lets the resident
// size go before it stops the process: the checks act at the budget, the
// watchdog catches what grows between them, with room for one sampling
// interval's growth under the promise of 1.25× the budget.
const HardFactor = 1.15

// Budget is the process's memory cap and what it is doing now (the file
// and stage that an error names).
type Budget struct {
	// limit is atomic because the watchdog reads it while the command,
	// having parsed --max-memory, sets it.
	limit atomic.Int64
	mu    sync.Mutex
	file  string
	stage string
	// offset is the byte of the file read so far (-1: none), kept apart
	// from mu because the reader updates it per chunk.
	offset atomic.Int64
	// rss reads the process's resident size; tests replace it.
	rss func() int64
	// limitSetAt is the collector's cycle count when the analysis's soft
	// limit was last set (RelaxForAnalysis waits for collections under
	// it); atomic, as the analysis's stages may check side by side.
	limitSetAt atomic.Uint64
}

// New returns a budget of limit bytes (positive).
func New(limit int64) *Budget {
	b := &Budget{rss: residentBytes}
	b.limit.Store(limit)
	b.offset.Store(-1)
	return b
}

// Limit is the budget in bytes.
func (b *Budget) Limit() int64 { return b.limit.Load() }

// SetLimit changes the budget to limit bytes (positive; others are
// ignored): main makes the budget before a command parses --max-memory.
func (b *Budget) SetLimit(limit int64) {
	if limit > 0 {
		b.limit.Store(limit)
	}
}

// Floor is the least resident size a budget allows: the runtime and the
// binary's pages take 10-20 MB before any work, so a smaller budget
// (--max-memory 64KB) caps the model and one JSON value (ingest) but
// cannot cap the process below what it starts with.
const Floor = 24 << 20

// effective is the budget the resident size is held to: Limit, or Floor.
func (b *Budget) effective() int64 { return max(b.Limit(), Floor) }

// Hard is the resident size at which Watch stops the process.
func (b *Budget) Hard() int64 { return int64(float64(b.effective()) * HardFactor) }

// SoftLimit sets the Go runtime's soft memory limit to the budget less
// room for what the runtime does not manage (the binary's pages, thread
// stacks), so the collector works harder as the heap nears the budget
// instead of letting garbage double it. It is process-wide: only main
// calls it. It returns the previous limit.
func (b *Budget) SoftLimit() int64 {
	return debug.SetMemoryLimit(b.effective() * 9 / 10)
}

// Enter records that the process now works on file (a path, or "" for
// none) in stage ("reading", "analysis", "report", ...): what an Error
// and the watchdog's message name. It resets the byte offset.
func (b *Budget) Enter(file, stage string) {
	b.mu.Lock()
	b.file, b.stage = file, stage
	b.mu.Unlock()
	b.offset.Store(-1)
}

// Progress records the byte offset reached in the current file (an
// ingest.Options.Progress callback).
func (b *Budget) Progress(read, _ int64) { b.offset.Store(read) }

// Check returns an *Error when the process's resident size is over the
// budget even after a full collection that returns free memory to the
// system (done only when the first reading is over, so a check under
// the budget costs one read of /proc).
func (b *Budget) Check() error {
	if b == nil || b.rss() <= b.effective() {
		return nil
	}
	debug.FreeOSMemory()
	if n := b.rss(); n > b.effective() {
		return b.exceeded(n, b.effective())
	}
	return nil
}

// exceeded builds the Error for a resident size n over max.
func (b *Budget) exceeded(n, max int64) *Error {
	b.mu.Lock()
	defer b.mu.Unlock()
	limit := b.Limit()
	return &Error{File: b.file, Stage: b.stage, Offset: b.offset.Load(), InUse: n, Budget: limit, Hard: max > limit}
}

// Error reports a process over its memory budget.
type Error struct {
	// File is the input being worked on ("" when none); Stage what was
	// done with it; Offset the byte of File read so far (-1 when the
	// stage is past reading).
	File, Stage string
	Offset      int64
	// InUse is the resident size measured, Budget the cap.
	InUse, Budget int64
	// Hard is true when the watchdog stopped the process (the resident
	// size passed Budget × HardFactor between two checks).
	Hard bool
}

func (e *Error) Error() string {
	var parts []string
	if e.File != "" {
		parts = append(parts, e.File)
	}
	switch {
	case e.Offset >= 0:
		parts = append(parts, fmt.Sprintf("%s, at byte %d", e.Stage, e.Offset))
	case e.Stage != "":
		parts = append(parts, e.Stage)
	}
	return fmt.Sprintf("%sthe process needs more memory than the budget of %s (%s in use); raise it with --max-memory SIZE",
		strings.Join(append(parts, ""), ": "), FormatBytes(e.Budget), FormatBytes(e.InUse))
}

// FormatBytes writes n bytes as "4.1 GB" (powers of 1024).
func FormatBytes(n int64) string {
	f := float64(n)
	for _, u := range []string{"bytes", "KB", "MB", "GB"} {
		if f < 1024 {
			if u == "bytes" {
				return fmt.Sprintf("%d bytes", n)
			}
			return fmt.Sprintf("%.1f %s", f, u)
		}
		f /= 1024
	}
	return fmt.Sprintf("%.1f TB", f)
}

// heapEstimate is the memory the Go runtime holds from the system (all
// its classes less what it has released): the resident size where /proc
// cannot be read. runtime/metrics reads it without stopping the world.
func heapEstimate() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}

// analysisHeadroom is how many times the live heap after reading (the
// model) the soft limit allows while a trace is analyzed and rendered.
// Without a limit the collector let garbage take RSS to 3.7-4.4× `top`'s;
// at 3 (when the facts of 1 M kernels peaked near 2.2 times the model's
// heap) report took 2.6-2.9× `top`'s RSS. Report's peak RSS is about the
// limit (the analysis allocates more than the room above its live heap),
// so this sets its ratio to `top`: 1.5 of the model's heap measured by a
// collection takes report to 1.23-1.38× `top` on 1 M to 10 M kernels,
// whose analysis holds 1.3-1.35× the model at its peak, with a few
// collections (issue 27); a shape whose analysis outgrows it
// raises the limit between stages (RelaxForAnalysis) rather than have
// the collector run without pause.
const analysisHeadroom = 1.5

// relaxAt, relaxAfter and relaxTo are RelaxForAnalysis's rule: once the
// live heap passes relaxAt of the soft limit and the collector has run
// relaxAfter times under that limit, the limit becomes relaxTo times the
// live heap: room for the collector to run every sixth of the heap, not
// more. The live heap alone said nothing of the collector's work: the
// analysis of 10 M kernels ends near 90 % of its limit in one to three
// collections (more on a loaded machine, whose longer marking also
// counts more of what is allocated meanwhile as live), and one
// relaxation to 1.35× it took report to 1.76-1.83× `top`'s RSS (issue
// 27); an analysis the limit really squeezes runs eight collections in
// a fraction of its time.
const (
	relaxAt    = 0.9
	relaxAfter = 8
	relaxTo    = 1.2
)

// TightenForAnalysis lowers the Go runtime's soft memory limit, while a
// trace is analyzed and its output written, to analysisHeadroom times
// the heap live now (the model just read; at least 256 MB), never above
// the budget's soft limit. The collector then works harder as the
// analysis nears it, instead of letting the heap double; past it, the
// runtime caps the collector's CPU, so a bigger analysis slows rather
// than fails. Process-wide: only main's budget calls it.
func (b *Budget) TightenForAnalysis() {
	// The heap the last collection found live is reading's, with what
	// it held then (buffers, partial tables): 1.5-1.65 GB on the same
	// 10 M kernels, so report's limit, and its RSS, varied with when
	// that collection ran (1.38-1.52× top's). Collected now, the limit
	// is set from the model alone, for 0.3 s of marking at 10 M.
	runtime.GC()
	live := liveHeap()
	if live == 0 {
		return
	}
	soft := max(int64(float64(live)*analysisHeadroom), 256<<20)
	debug.SetMemoryLimit(min(soft, b.effective()*9/10))
	b.limitSetAt.Store(gcCycles())
}

// RelaxForAnalysis, called between the analysis's stages, raises the soft
// limit TightenForAnalysis set once the heap live at the last collection
// passes relaxAt of it and the collector has run relaxAfter times since
// the limit was set, to relaxTo times that heap (never above the
// budget's soft limit, never lower than it was): an analysis larger than
// its model and the limit's room keeps room for garbage, instead of the
// collector marking the model again and again at its CPU cap.
// Process-wide, as TightenForAnalysis.
func (b *Budget) RelaxForAnalysis() {
	live := liveHeap()
	cur := debug.SetMemoryLimit(-1)
	if live == 0 || float64(live) < float64(cur)*relaxAt {
		return
	}
	cycles := gcCycles()
	if set := b.limitSetAt.Load(); cycles < set+relaxAfter || !b.limitSetAt.CompareAndSwap(set, cycles) {
		return // not yet working hard, or relaxed meanwhile by another stage
	}
	soft := min(int64(float64(live)*relaxTo), b.effective()*9/10)
	debug.SetMemoryLimit(max(soft, cur))
}

// gcCycles returns the number of collections the runtime has completed.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// liveHeap returns the heap the last collection found live, or 0 where
// the runtime does not say.
func liveHeap() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// Package ingest reads profiler traces into the trace model.
//
// Nsight Systems SQLite exports (plain or gzipped) are recognised by the
// SQLite header and read table by table (see nsys.go).
//
// One reader handles every Chrome-trace-JSON dialect tracelens meets:
// Kineto/torch.profiler (current and 2021-era legacy schema), JAX/XLA and
// Perfetto exports, and tracelens capture's own output. The dialect is
// recognised from the content, never from the file name; gzip likewise.
//
// Reading is a pipeline: one goroutine decompresses and cuts the event
// array into batches at event boundaries (speculatively, at Kineto's event
// separator or the one the file uses, when the input can be read again:
// see speculativeCut; from an uncompressed file it reads only a window
// before each cut and the workers read the batches themselves: see
// direct),
// workers check and parse batches in parallel (a fast path for the fields
// Kineto writes, gjson for anything unusual), and the results are merged
// in file order so the model is the same whatever the number of workers;
// the passes after the last event run over ranges of the model in
// parallel where they split.
// The model is capped by a memory budget (Options.MaxMemory).
// Memory stays bounded by the model plus a few batch buffers: the raw JSON
// is never held whole.
package ingest

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"

	"github.com/tracelens/tracelens/trace"
)

// Options tune a read. The zero value is ready to use.
type Options struct {
	// Workers is the number of parsing goroutines (default GOMAXPROCS).
	Workers int
	// Progress, if set, is called from the reading goroutine with the
	// number of input bytes consumed so far and the total (0 if unknown).
	Progress func(read, total int64)
	// MaxMemory is the memory budget in bytes (the process's, under
	// --max-memory): reading stops with a *BudgetError as soon as the
	// model passes half of it (the rest is for read buffers, garbage and
	// the analysis), or one JSON value a quarter. 0 means
	// DefaultMaxMemory(); negative means no cap.
	MaxMemory int64
	// GCLimit, if positive, is the process's soft memory limit while
	// reading, with proportional collection off, so the collector runs
	// when the heap nears the limit instead of each time it doubles from a
	// small start. The limit is raised while the model grows past half of
	// it (a ceiling must never become a target the live heap sits at,
	// making the collector run back to back), and both settings are
	// restored before Read returns.
	GCLimit int64
	// KernelsOnly says the caller needs only the kernels (their names,
	// times and devices), as `top` does: a reader may then leave the rest
	// out of the model. Nsight Systems exports honour it (their API-call,
	// copy, memset and NVTX tables are counted, not read, so Events still
	// counts every row); Chrome JSON traces are read whole, since finding
	// their kernels means parsing every event anyway.
	KernelsOnly bool

	// Stages, if set, receives a line for the end of each stage of the
	// read (time since it began), then totals of the time the stages spent
	// working and waiting and the runtime's collector figures: profiling
	// output, to find the critical path on many cores.
	Stages io.Writer

	// chunk overrides the batch buffer size; tests use small chunks to
	// exercise batch boundaries on small fixtures.
	chunk int
	// slow reads every event with gjson, the fast path's reference.
	slow bool
	// serial turns the speculative split off (see speculativeCut).
	serial bool
	// expect is the JSON text's size when known in advance, so the model's
	// slices can be allocated once at the right size instead of doubling.
	expect int64
	// at is where the JSON text starts in an input that can be read at
	// any offset and seeked (ra, seeker: see direct); ra is nil otherwise.
	ra     io.ReaderAt
	seeker io.Seeker
	at     int64
}

// JSONSize guesses the size of the JSON text in the file at path (see
// jsonSize); 0 when unknown. Callers use it to budget memory.
func JSONSize(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return 0
	}
	return jsonSize(f, st.Size())
}

// jsonSize guesses the size of the JSON text in f: the file size, or for
// gzip the ISIZE trailer (uncompressed size mod 4 GiB). It is only a hint
// for allocation, so a wrong guess costs memory, never correctness.
func jsonSize(f *os.File, size int64) int64 {
	var magic [2]byte
	if _, err := f.ReadAt(magic[:], 0); err != nil {
		return 0
	}
	if magic != [2]byte{0x1f, 0x8b} {
		return size
	}
	var tail [4]byte
	if size < 18 {
		return 0
	}
	if _, err := f.ReadAt(tail[:], size-4); err != nil {
		return 0
	}
	isize := int64(tail[0]) | int64(tail[1])<<8 | int64(tail[2])<<16 | int64(tail[3])<<24
	if isize < size {
		return 0 // a >4 GiB member wrapped around, or several members
	}
	return isize
}

// ReadFile reads the trace at path ("-" reads standard input). Errors name
// the file.
func ReadFile(path string, opt Options) (*trace.Trace, error) {
	var r io.Reader
	var total int64
	if path == "-" {
		r = os.Stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, err // already names the path
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil {
			if st.IsDir() {
				return nil, fmt.Errorf("%s: is a directory, not a trace file", path)
			}
			total = st.Size()
		}
		if ts, ok, err := readFileNsys(f, total, nsysOptions{workers: opt.Workers, kernelsOnly: opt.KernelsOnly}); ok {
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			ts[0].Source = path
			return ts[0], nil
		}
		r = f
		opt.expect = jsonSize(f, total)
	}
	if path == "-" {
		t, rest, err := readStreamNsys(r, opt.Workers)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if t != nil {
			t.Source = path
			return t, nil
		}
		r = rest
	}
	t, err := readRetry(r, total, opt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	t.Source = path
	return t, nil
}

// Read reads a trace from r; name is used in the model's Source only.
func Read(r io.Reader, name string, opt Options) (*trace.Trace, error) {
	if l, ok := r.(interface{ Len() int }); ok && opt.expect == 0 {
		opt.expect = int64(l.Len()) // in-memory input; wrong for gzip, harmlessly
	}
	var total int64 // known for in-memory input (bytes.Reader)
	if sz, ok := r.(interface{ Size() int64 }); ok {
		total = sz.Size()
	}
	t, rest, err := readStreamNsys(r, opt.Workers)
	if err != nil {
		return nil, err
	}
	if t != nil {
		t.Source = name
		return t, nil
	}
	t, err = readRetry(rest, total, opt)
	if err != nil {
		return nil, err
	}
	t.Source = name
	return t, nil
}

// readRetry reads with the speculative split where the input can be read
// again (a file, an in-memory reader), and starts over with the serial
// scan if a cut missed; a stream is read serially from the start.
func readRetry(r io.Reader, total int64, opt Options) (*trace.Trace, error) {
	seeker, ok := r.(io.Seeker)
	var at int64
	if ok {
		var err error
		if at, err = seeker.Seek(0, io.SeekCurrent); err != nil {
			ok = false // a pipe or terminal
		}
	}
	if !ok || opt.serial {
		opt.serial = true
		return read(r, total, opt)
	}
	if ra, ok := r.(io.ReaderAt); ok && total > at {
		opt.ra, opt.seeker, opt.at = ra, seeker, at
	}
	t, err := read(r, total, opt)
	if !errors.Is(err, errMiss) {
		return t, err
	}
	opt.ra = nil
	if _, err := seeker.Seek(at, io.SeekStart); err != nil {
		return nil, err
	}
	opt.serial = true
	return read(r, total, opt)
}

// read reads one trace: the scanner cuts the JSON text into batches,
// workers parse them side by side, and the merger adds their results to
// the model in batch order.
func read(raw io.Reader, total int64, opt Options) (*trace.Trace, error) {
	in, err := openInput(raw, total, opt.Progress)
	if err != nil {
		return nil, err
	}
	if in.gzr != nil {
		defer in.gzr.zr.Close()
	}
	clock := newStageClock(opt.Stages)
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	p := startWorkers(workers, opt.slow, clock)
	budget := memoryBudget(opt.MaxMemory)
	pr := &progressReader{r: in.src, br: in.br, cr: in.cr}
	compressed := in.gzr != nil
	st := &streamer{r: pr, compressed: compressed, free: p.free, chunk: opt.chunk, emit: p.emit, speculate: !opt.serial, clock: clock,
		budget: budget, maxBuf: budget / maxValueShare}
	if st.chunk <= 0 {
		st.chunk = batchSize(opt.expect, workers)
	}
	if opt.ra != nil && !compressed {
		st.direct = newDirect(opt.ra, opt.seeker, opt.at, total, in.br, pr)
	}
	scanErr := p.scan(st, clock)

	m := newMerger(workers, opt.expect, budget/modelShare) // the slices the model may plan for
	m.clock = clock
	defer m.sizer.prefaulting.Wait() // nothing of a read outlives it
	gc := newGCScope(opt.GCLimit)
	defer gc.restore()
	parseErr := p.mergeInOrder(m, gc, budget, pr, clock)
	clock.mark("last merge")
	if parseErr != nil {
		return nil, parseErr
	}
	// p.scan's goroutine has set *scanErr: the results closed after it.
	if err := in.scanFailure(*scanErr, st); err != nil {
		return nil, err
	}
	t, err := m.safeFinish(st.top)
	if err != nil {
		return nil, err
	}
	if err := in.finish(t, st); err != nil {
		return nil, err
	}
	clock.flush()
	return t, nil
}

// memoryBudget is the read's memory budget: Options.MaxMemory, 0 the
// default, negative none.
func memoryBudget(limit int64) int64 {
	if limit == 0 {
		return DefaultMaxMemory()
	}
	if limit < 0 {
		return math.MaxInt64
	}
	return limit
}

// batchSize is the size of a batch of an input of expect bytes (0:
// unknown) read by workers goroutines. Batches scale with the input so
// that those in flight, about one per worker, stay a small fraction of
// it: at most 4 MiB, a 64th of the input, and a 32nd of it shared among
// the workers. With one buffer per worker, 16 workers held 27 4 MiB
// buffers (a fifth of a 513 MB input) and the heap sat at the soft
// memory limit: 12-14 collections against 1 on 2 cores, peak RSS 0.57×.
func batchSize(expect int64, workers int) int {
	if expect <= 0 {
		return chunkSize
	}
	return int(min(max(min(expect/64, expect/(32*int64(workers))), 256<<10), chunkSize))
}

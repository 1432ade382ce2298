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
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"

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

// countingReader reports progress on the raw (possibly compressed) bytes.
// n is read by the merger to extrapolate the model's size, hence atomic.
type countingReader struct {
	r     io.Reader
	n     atomic.Int64
	total int64
	last  int64
	fn    func(read, total int64)
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	n := c.n.Add(int64(k))
	// Every 64 KiB: a budget error names the byte reached, and a gzip
	// bomb's first megabyte already holds millions of events.
	if c.fn != nil && (n-c.last >= 64<<10 || err != nil) {
		c.last = n
		c.fn(n, c.total)
	}
	return k, err
}

// progressReader is what the scanner reads: the JSON text. After each
// read it notes how much JSON has come out and how much of the file went
// in to make it (bytes read less those still buffered), so the merger can
// tell which fraction of the file the events merged so far came from. A
// gzip bomb expands 1000-fold: the compressed bytes read ahead alone would
// otherwise be many times the events merged.
type progressReader struct {
	r      io.Reader
	br     *bufio.Reader
	cr     *countingReader
	in     atomic.Int64
	out    atomic.Int64
	outAcc int64
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.outAcc += int64(n)
	p.out.Store(p.outAcc)
	p.in.Store(p.cr.n.Load() - int64(p.br.Buffered()))
	return n, err
}

// fraction estimates the share of the file that held the JSON text up to
// offset end; 0 when the file's size is unknown.
func (p *progressReader) fraction(end int64) float64 {
	in, out := p.in.Load(), p.out.Load()
	if p.cr.total <= 0 || out <= 0 {
		return 0
	}
	return min(float64(end)/float64(out)*float64(in)/float64(p.cr.total), 1)
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

// input is a read's byte source: the raw reader, counted for progress and
// buffered, and its JSON text, decompressed when it is gzip.
type input struct {
	cr  *countingReader
	br  *bufio.Reader
	src io.Reader   // the JSON text
	gzr *gzipReader // nil: not compressed
}

// openInput wraps raw for reading, recognising gzip by its magic bytes.
// The caller closes gzr's decompressor.
func openInput(raw io.Reader, total int64, progress func(read, total int64)) (*input, error) {
	cr := &countingReader{r: raw, total: total, fn: progress}
	br := bufio.NewReaderSize(cr, 64<<10)
	in := &input{cr: cr, br: br, src: br}
	magic, _ := br.Peek(2)
	if bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("not a valid gzip file: %w", err)
		}
		in.gzr = &gzipReader{zr: zr, br: br, cr: cr, garbageAt: -1}
		zr.Multistream(false)
		in.src = in.gzr
	}
	return in, nil
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

// workerPool is the parsing side of a read: its workers parse the batches
// the scanner sends and hand their results to the merger, returning
// spent buffers (free) and results (spare) for reuse.
type workerPool struct {
	n       int
	batches chan *batch
	results chan *chunkResult
	free    chan []byte
	spare   chan *chunkResult
	// stop tells the scanner that no more events are wanted.
	stop chan struct{}
	wg   sync.WaitGroup
}

// startWorkers starts n workers (slow: each reads every event with
// gjson), which run until the batches channel closes.
func startWorkers(n int, slow bool, clock *stageClock) *workerPool {
	p := &workerPool{
		n:       n,
		batches: make(chan *batch, n),
		results: make(chan *chunkResult, n),
		free:    make(chan []byte, n+2),
		spare:   make(chan *chunkResult, n+2),
		stop:    make(chan struct{}),
	}
	for i := 0; i < n; i++ {
		w := newWorker(i, p.spare)
		w.slow = slow
		w.clock = clock
		p.wg.Add(1)
		go p.work(w, clock)
	}
	return p
}

// work is one worker's loop: parse each batch, give a direct batch's
// buffer back to the scanner, send the result to the merger.
func (p *workerPool) work(w *worker, clock *stageClock) {
	defer p.wg.Done()
	idle := clock.now()
	for b := range p.batches {
		clock.add("workers idle", idle)
		t := clock.now()
		res := w.safeParse(b)
		clock.add("parse (all workers)", t)
		if b.src == nil { // a direct batch's buffer is the worker's
			select {
			case p.free <- b.buf:
			default:
			}
		}
		t = clock.now()
		p.results <- res
		clock.add("workers wait for the merger", t)
		idle = clock.now()
	}
}

// emit hands a batch to the workers; false once the read has stopped.
func (p *workerPool) emit(b *batch) bool {
	select {
	case p.batches <- b:
		return true
	case <-p.stop:
		return false
	}
}

// scan runs the scanner in a goroutine of its own and, when it ends,
// closes the batches and, once the workers are done, the results. The
// error it returns is set before the results close.
func (p *workerPool) scan(st *streamer, clock *stageClock) *error {
	scanErr := new(error)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				*scanErr = fmt.Errorf("internal error while reading: %v", r)
			}
			close(p.batches)
			p.wg.Wait()
			close(p.results)
		}()
		*scanErr = st.run()
		clock.mark("scan done")
	}()
	return scanErr
}

// mergeInOrder adds the workers' results to m in batch order as they
// come, until the results close. At the first error, a worker's or the
// model outgrowing its share of budget, it stops the scanner and merges
// no more, and returns that error.
func (p *workerPool) mergeInOrder(m *merger, gc *gcScope, budget int64, pr *progressReader, clock *stageClock) error {
	pending := map[int]*chunkResult{}
	next := 0
	var parseErr error
	fail := func(err error) {
		if parseErr == nil {
			parseErr = err
			close(p.stop)
		}
	}
	wait := clock.now()
	for res := range p.results {
		clock.add("merge idle", wait)
		if res.err != nil {
			fail(res.err)
		}
		pending[res.seq] = res
		for {
			r, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			if parseErr == nil {
				t := clock.now()
				m.add(r)
				clock.add("merge add", t)
				select {
				case p.spare <- r:
				default:
					clock.count("merge: results dropped")
				}
				if m.bytes > budget/modelShare || m.sizer.over {
					fail(m.budgetError(budget, pr.fraction(r.end)))
				}
				gc.grow(m.bytes)
			}
			next++
		}
		wait = clock.now()
	}
	return parseErr
}

// scanFailure is the error a read whose workers all succeeded ends with:
// the scanner's (a corrupt gzip stream named as such, bytes after the
// gzip data described), or an input with no events.
func (in *input) scanFailure(scanErr error, st *streamer) error {
	if scanErr != nil {
		var ge gzipError
		if errors.As(scanErr, &ge) {
			return fmt.Errorf("corrupt gzip data: %w", ge.err)
		}
		if in.gzr != nil && in.gzr.garbageAt >= 0 {
			return fmt.Errorf("%w (%s)", scanErr, in.gzr.garbage())
		}
		return scanErr
	}
	if !st.sawEvents {
		if len(st.top) > 0 {
			return &FormatError{Msg: "no traceEvents array: not a Chrome trace"}
		}
		return &FormatError{Msg: "no events"}
	}
	return nil
}

// finish refuses a Chrome trace none of whose events tracelens models,
// warns of an event array left open or bytes after the gzip data, and
// reports the final progress.
func (in *input) finish(t *trace.Trace, st *streamer) error {
	if t.Meta.Format == "chrome" && t.Events > 0 && modelled(t) == 0 {
		return &FormatError{Msg: fmt.Sprintf("not a profiler trace: none of its %d events is one tracelens models%s", t.Events, topSkip(t))}
	}
	if st.unclosed {
		t.Warnings = append(t.Warnings, fmt.Sprintf("the event array ends without its closing ']' (the writing process may have died): read the %d whole events before the end, as Chrome's trace viewer does", t.Events))
	}
	if in.gzr != nil && in.gzr.garbageAt >= 0 {
		t.Warnings = append(t.Warnings, "ignored "+in.gzr.garbage())
	}
	if in.cr.fn != nil {
		in.cr.fn(in.cr.n.Load(), in.cr.total)
	}
	return nil
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

// modelled counts the records a trace's events became.
func modelled(t *trace.Trace) int {
	return len(t.GPU) + len(t.APICalls) + len(t.Ops) + len(t.Frames) + len(t.Annotations) + len(t.GPUAnnotations) + len(t.Memory)
}

// topSkip names the commonest reason events were skipped, for errors.
func topSkip(t *trace.Trace) string {
	best := -1
	for i, s := range t.Skipped {
		if best < 0 || s.Count > t.Skipped[best].Count {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	s := t.Skipped[best]
	return fmt.Sprintf(" (%d: %s, the first at byte %d)", s.Count, s.Reason, s.FirstOffset)
}

// gzipReader decompresses each gzip member in turn, as gzip -d does, and
// stops at bytes that do not start another member, noting where: such a
// file was appended to or padded after it was written, and saying so is
// clearer than a decompressor's "unexpected EOF" or "invalid header".
type gzipReader struct {
	zr *gzip.Reader
	br *bufio.Reader
	cr *countingReader
	// garbageAt is the compressed offset of the first byte after the last
	// member that is not gzip data (-1 if none).
	garbageAt int64
}

func (g *gzipReader) Read(p []byte) (int, error) {
	for {
		n, err := g.zr.Read(p)
		if err == nil || err == io.EOF && n > 0 {
			return n, nil
		}
		if err != io.EOF {
			return n, gzipError{err}
		}
		next, _ := g.br.Peek(2)
		switch {
		case len(next) == 0:
			return 0, io.EOF
		case bytes.Equal(next, []byte{0x1f, 0x8b}):
			if err := g.zr.Reset(g.br); err != nil {
				return 0, gzipError{err}
			}
			g.zr.Multistream(false)
		default:
			g.garbageAt = g.cr.n.Load() - int64(g.br.Buffered())
			return 0, io.EOF
		}
	}
}

// garbage describes the bytes after the gzip data.
func (g *gzipReader) garbage() string {
	if g.cr.total > g.garbageAt {
		return fmt.Sprintf("%d bytes after the gzip data at compressed byte %d that are not gzip data", g.cr.total-g.garbageAt, g.garbageAt)
	}
	return fmt.Sprintf("bytes after the gzip data at compressed byte %d that are not gzip data", g.garbageAt)
}

// gzipError marks errors from the decompressor so they are reported as a
// corrupt file rather than as a JSON problem.
type gzipError struct{ err error }

func (g gzipError) Error() string { return g.err.Error() }

// CollectorLimit sets the process's garbage collector up to work within
// limit bytes (a soft memory limit, proportional collection off) and
// returns the function that restores the previous settings; limit ≤ 0
// changes nothing. The collector's settings are process-wide: this and
// Options.GCLimit (the same scope, for one read) are the only places in
// tracelens that change them, so that callers reading many traces
// (distributed's runs) hold one scope around their work instead of each
// setting and restoring them, out of order, on their own.
func CollectorLimit(limit int64) (restore func()) {
	return newGCScope(limit).restore
}

// gcScope sets the collector up for one read and restores it afterwards.
type gcScope struct {
	limit             int64 // current soft limit; 0: not managed
	oldLimit, oldPerc int64
}

func newGCScope(limit int64) *gcScope {
	g := &gcScope{}
	if limit > 0 {
		g.limit = limit
		g.oldLimit = debug.SetMemoryLimit(limit)
		g.oldPerc = int64(debug.SetGCPercent(-1))
	}
	return g
}

// grow raises the soft limit to twice the model once the model passes half
// of it, so the live heap never sits at the limit.
func (g *gcScope) grow(model int64) {
	if g.limit > 0 && model > g.limit/2 {
		g.limit = 2 * model
		debug.SetMemoryLimit(g.limit)
	}
}

func (g *gcScope) restore() {
	if g.limit > 0 {
		debug.SetGCPercent(int(g.oldPerc))
		debug.SetMemoryLimit(g.oldLimit)
	}
}

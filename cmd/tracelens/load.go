package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tracelens/tracelens/fixtures"
	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/membudget"
	"github.com/tracelens/tracelens/trace"
)

// embeddedPrefix names a trace compiled into the binary
// ("embedded:eggroll_hooks.json.gz"), so the demo and docs work anywhere.
const embeddedPrefix = "embedded:"

// loadTrace reads the trace at path, drawing a progress bar on a terminal,
// and takes the ranges --step-range names as its steps.
func loadTrace(e *env, path string) (*trace.Trace, error) {
	t, err := readTrace(e, path, ingest.Options{})
	if err != nil || e.stepRange == "" {
		return t, err
	}
	return t, ingest.StepsFromRange(t, e.stepRange)
}

// loadKernels reads what `top` shows of the trace at path: only its
// kernels where the format allows (ingest.Options.KernelsOnly), unless a
// --step-range needs the NVTX ranges.
func loadKernels(e *env, path string) (*trace.Trace, error) {
	if e.stepRange != "" {
		return loadTrace(e, path)
	}
	return readTrace(e, path, ingest.Options{KernelsOnly: true})
}

// readTrace reads the trace at path, drawing a progress bar on a
// terminal; of base it takes KernelsOnly.
func readTrace(e *env, path string, base ingest.Options) (*trace.Trace, error) {
	if name, ok := strings.CutPrefix(path, embeddedPrefix); ok {
		r, err := fixtures.Open(name)
		if err != nil {
			return nil, fmt.Errorf("%s: no such embedded trace (have %s)", path, strings.Join(fixtures.Names(), ", "))
		}
		return ingest.Read(r, path, ingest.Options{})
	}
	var progress func(read, total int64)
	if e.stderrTTY {
		p := &progressBar{e: e, start: time.Now(), path: path}
		progress = p.update
		defer p.done()
	}
	return readWith(e, path, e.readOptions(path, base.KernelsOnly, progress))
}

// readOptions are the options every command reads the file at path with:
// the model's cap (--max-memory), the stage clock, the collector's limit
// for a big read, and progress (nil for none) chained after the memory
// budget's offset record.
func (e *env) readOptions(path string, kernelsOnly bool, progress func(read, total int64)) ingest.Options {
	opt := ingest.Options{MaxMemory: e.maxMemory, Stages: e.stages, KernelsOnly: kernelsOnly}
	if size := ingest.JSONSize(path); size > bigTrace {
		// The model of a Chrome trace is about a quarter of its JSON; what
		// pushes RSS higher is garbage the collector has not yet returned.
		// A soft limit of 45% of the input keeps peak RSS under half the
		// file (ingest raises it if the model needs more, and restores
		// the collector's settings when done).
		// Plus what is live already: diff reads NEW with BASE's model and
		// analysis held, and a limit below them kept the collector running
		// back to back through the whole second read (twice its time).
		opt.GCLimit = collectorLimit(size)
	}
	opt.Progress = e.readingProgress(path, progress)
	if b := e.memBudget(); b != nil && opt.GCLimit > b.Limit()*9/10 {
		opt.GCLimit = b.Limit() * 9 / 10 // ingest's soft limit stays under the process's budget
	}
	return opt
}

// readWith is readFileOrStdin, marking the stage and telling how to raise
// the model's budget when it was too small.
func readWith(e *env, path string, opt ingest.Options) (*trace.Trace, error) {
	t, err := readFileOrStdin(e, path, opt)
	e.stageAt("read returned")
	var be *ingest.BudgetError
	if errors.As(err, &be) {
		return nil, fmt.Errorf("%w; raise the budget with --max-memory SIZE (default: half of this machine's memory)", err)
	}
	return t, err
}

// readFileOrStdin is ingest.ReadFile, except that "-" reads the command's
// standard input (e.stdin, which in-process callers and tests set) rather
// than the process's.
func readFileOrStdin(e *env, path string, opt ingest.Options) (*trace.Trace, error) {
	if path != "-" {
		return ingest.ReadFile(path, opt)
	}
	t, err := ingest.Read(e.stdin, path, opt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// collectorLimit is the collector's soft limit for reading size bytes of
// JSON: 45% of it above what is live (see readOptions).
func collectorLimit(size int64) int64 { return size*45/100 + membudget.LiveHeap() }

// bigTrace is the input size above which loadTrace budgets memory.
const bigTrace = 64 << 20

// progressBar draws "reading x.json [=====>    ] 41% 210/512 MB" on stderr,
// only for inputs big enough to take noticeable time.
type progressBar struct {
	e     *env
	start time.Time
	last  time.Time
	path  string
	drawn bool
}

func (p *progressBar) update(read, total int64) {
	now := time.Now()
	if total < 32<<20 || now.Sub(p.start) < 200*time.Millisecond || now.Sub(p.last) < 100*time.Millisecond && read < total {
		return
	}
	p.last = now
	const width = 30
	frac := float64(read) / float64(total)
	if frac > 1 {
		frac = 1
	}
	n := int(frac * width)
	bar := strings.Repeat("=", n) + strings.Repeat(" ", width-n)
	fmt.Fprintf(p.e.stderr, "\rreading %s [%s] %3.0f%% %d/%d MB", p.path, bar, frac*100, read>>20, total>>20)
	p.drawn = true
}

func (p *progressBar) done() {
	if p.drawn {
		fmt.Fprint(p.e.stderr, "\r\033[K")
	}
}

// oneTrace checks that exactly one trace argument was given.
func oneTrace(args []string) (string, error) {
	switch len(args) {
	case 1:
		return args[0], nil
	case 0:
		return "", usageError{"missing TRACE argument"}
	default:
		return "", usageError{fmt.Sprintf("expected one TRACE, got %d arguments", len(args))}
	}
}

// stdinOnce rejects arguments that name standard input (-) more than
// once: it can be read only once.
func stdinOnce(pos []string) error {
	n := 0
	for _, p := range pos {
		if p == "-" {
			n++
		}
	}
	if n > 1 {
		return usageError{"standard input (-) can be read only once: give - for at most one trace and a file for the others"}
	}
	return nil
}

// stageAt writes, with $TRACELENS_STAGES set, that what happened
// happened now: how long after main began.
func (e *env) stageAt(what string) {
	if e.stages != nil {
		fmt.Fprintf(e.stages, "tracelens %s at %.1f ms after main began\n", what, float64(time.Since(e.start).Microseconds())/1000)
	}
}

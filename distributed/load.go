package distributed

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"

	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
)

// Options tune Load. The zero value is ready to use.
type Options struct {
	// Parallel is how many ranks are read at once (default: GOMAXPROCS,
	// at most 4: each rank in flight holds its full model until it is
	// compacted, so this bounds peak memory).
	Parallel int
	// CommKernel, if set, also counts kernels whose name matches it as
	// communication (custom collectives).
	CommKernel *regexp.Regexp
	// MemoryBudget, if positive, caps the Go heap while ranks are read
	// and while Analyze rereads two of them (bytes; ingest.CollectorLimit,
	// restored when they return), so that memory stays near what the
	// ranks in flight need instead of growing with garbage. It is
	// process-wide while it lasts; ingest owns the setting.
	MemoryBudget int64
	// Each, if set, is called with every rank's full trace and its Rank
	// as soon as the rank is read, before the trace is dropped, so that a
	// caller needing the full model (export) reads each file once. It is
	// called from several goroutines at once; the Rank's number may still
	// change when the run is assembled (a rank taken from file order), and
	// an error fails Load.
	Each func(*trace.Trace, *Rank) error
	// Enable and Disable select the cross-rank checks Analyze runs
	// (Checks), as analyze.Config selects analyzers: an empty Enable
	// means every check.
	Enable, Disable []string
	// MaxMemory caps each rank's model while it is read, as
	// ingest.Options.MaxMemory does for one trace (--max-memory): a rank
	// over it fails Load with ingest's *BudgetError. 0 is ingest's
	// default; negative means no cap.
	MaxMemory int64
}

// Budget is the memory budget Load needs for files read par at a time: the
// model of a trace is about a quarter of its JSON, and a soft limit of 45%
// of the JSON per rank in flight keeps garbage in check (the same rule
// as for one trace).
func Budget(files []string, par int) int64 {
	var largest int64
	for _, f := range files {
		largest = max(largest, ingest.JSONSize(f))
	}
	return int64(par) * largest * 45 / 100
}

// IsRun reports whether the arguments name a multi-rank run rather than
// trace files to look at one by one: a directory, a glob pattern, an
// Nsight Systems export whose CUDA streams belong to several processes
// (each process a rank), or several files that are all ranks (a
// distributedInfo object near the start of the JSON, rankN in the name,
// or such an export).
func IsRun(args []string) bool {
	if len(args) == 1 {
		a := args[0]
		if st, err := os.Stat(a); err == nil {
			return st.IsDir() || isMultiProcess(a)
		}
		return strings.ContainsAny(a, "*?[")
	}
	for _, a := range args {
		if rankFromName(filepath.Base(a)) < 0 && !hasDistributedInfo(a) && !isMultiProcess(a) {
			return false
		}
	}
	return len(args) > 1
}

// hasDistributedInfo looks for a distributedInfo key in the first MiB of
// the (decompressed) file, where Kineto writes it.
func hasDistributedInfo(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return false
		}
		defer zr.Close()
		r = zr
	}
	head := make([]byte, 1<<20)
	n, _ := io.ReadFull(r, head)
	return bytes.Contains(head[:n], []byte(`"distributedInfo"`))
}

// Files expands a run's arguments into trace files: a directory gives its
// *.json and *.json.gz files (what tensorboard_trace_handler writes) and
// Nsight Systems exports (*.sqlite, *.sqlite.gz: ingest.IsTraceName), a
// pattern its matches, a file itself. From a directory or a pattern only
// regular files are taken, directly or through symlinks
// (ingest.IsTraceEntry): a FIFO, socket or device is skipped. The result is sorted and never
// empty without an error.
func Files(args []string) ([]string, error) {
	var files []string
	for _, a := range args {
		st, err := os.Stat(a)
		switch {
		case err == nil && st.IsDir():
			ents, err := os.ReadDir(a)
			if err != nil {
				return nil, err
			}
			n := 0
			for _, e := range ents {
				if p := filepath.Join(a, e.Name()); ingest.IsTraceEntry(p, e) {
					files = append(files, p)
					n++
				}
			}
			if n == 0 {
				return nil, fmt.Errorf("%s: no trace files (*.json, *.json.gz, *.sqlite, *.sqlite.gz) in the directory", a)
			}
		case err == nil:
			files = append(files, a)
		case strings.ContainsAny(a, "*?["):
			m, gerr := filepath.Glob(a)
			if gerr != nil {
				return nil, fmt.Errorf("%s: bad pattern: %w", a, gerr)
			}
			// Only regular files: a FIFO or device among the matches
			// would block the run (ingest.IsTraceEntry).
			m = slices.DeleteFunc(m, func(p string) bool { return !ingest.IsRegularFile(p) })
			if len(m) == 0 {
				return nil, fmt.Errorf("%s: no file matches the pattern", a)
			}
			files = append(files, m...)
		default:
			return nil, err
		}
	}
	slices.Sort(files)
	return slices.Compact(files), nil
}

// Load reads every rank of a run (see Files for what args may be) and
// analyzes them together. Ranks are read in parallel and compacted as
// soon as each is read.
func Load(args []string, opt Options) (*Run, error) {
	files, err := Files(args)
	if err != nil {
		return nil, err
	}
	par := opt.Parallel
	if par <= 0 {
		par = min(runtime.GOMAXPROCS(0), 4)
	}
	par = min(par, len(files))
	defer ingest.CollectorLimit(opt.MemoryBudget)()
	workers := max(1, runtime.GOMAXPROCS(0)/par)
	ranks := make([][]*Rank, len(files))
	errs := make([]error, len(files))
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if isMultiProcess(f) {
				ranks[i], errs[i] = readProcessRanks(f, opt.CommKernel, workers, opt.MaxMemory, opt.Each)
				return
			}
			r, err := readRank(f, opt.CommKernel, workers, opt.MaxMemory, opt.Each)
			ranks[i], errs[i] = []*Rank{r}, err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return assemble(slices.Concat(ranks...), opt)
}

// readRank reads one rank's file and compacts it, handing both to each
// (if set) first.
func readRank(path string, extra *regexp.Regexp, workers int, maxMemory int64, each func(*trace.Trace, *Rank) error) (r *Rank, err error) {
	t, sc, size, err := readTrace(path, workers, maxMemory)
	if err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("%s: internal error while summarising the rank: %v", path, p)
		}
	}()
	r = compact(t, sc, path, size, extra)
	if each != nil {
		if err := each(t, r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// readTrace reads a trace through ingest while the comm scanner watches the
// JSON text go by (decompressed here so both see plain JSON once).
func readTrace(path string, workers int, maxMemory int64) (*trace.Trace, *commScanner, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, 0, err
	}
	defer f.Close()
	size := ingest.JSONSize(path)
	br := bufio.NewReaderSize(f, 256<<10)
	var src io.Reader = br
	compressed := false
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("%s: not a valid gzip file: %w", path, err)
		}
		defer zr.Close()
		src, compressed = gzipReader{zr}, true
	}
	sc := newCommScanner()
	t, err := ingest.Read(&teeReader{r: src, s: sc, size: size}, path, ingest.Options{Workers: workers, MaxMemory: maxMemory})
	if err != nil {
		// Offsets count decompressed bytes when the file was gzip, as
		// ingest says when it decompresses itself.
		var se *ingest.SyntaxError
		var ge gzipError
		switch {
		case errors.As(err, &ge):
			return nil, nil, 0, fmt.Errorf("%s: corrupt gzip data: %w", path, ge.err)
		case errors.As(err, &se):
			se.Compressed = se.Compressed || compressed
		}
		return nil, nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	return t, sc, size, nil
}

// gzipError marks errors of the decompressor, so that they read as a
// corrupt file rather than as bad JSON.
type gzipError struct{ err error }

func (g gzipError) Error() string { return g.err.Error() }

type gzipReader struct{ r io.Reader }

func (g gzipReader) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if err != nil && err != io.EOF {
		return n, gzipError{err}
	}
	return n, err
}

// ReadRankTrace reads one rank's full model again (the straggler
// explanation needs two ranks in full detail).
func ReadRankTrace(path string) (*trace.Trace, error) {
	return ReadRankTraceWith(path, 0)
}

// ReadRankTraceWith is ReadRankTrace with a cap on the model's size
// (ingest.Options.MaxMemory: 0 is ingest's default, negative none), as
// `--max-memory` sets it; use it as a Reader through a closure.
func ReadRankTraceWith(path string, maxMemory int64) (*trace.Trace, error) {
	if t, ok, err := readProcessTrace(path, runtime.GOMAXPROCS(0), maxMemory); ok {
		return t, err
	}
	t, _, _, err := readTrace(path, runtime.GOMAXPROCS(0), maxMemory)
	return t, err
}

package export

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/distributed"
	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
)

// Options configure an export. Dir is required; the rest has defaults.
type Options struct {
	// Dir is the output directory; each table is a subdirectory of it.
	Dir string
	// Workers is how many traces are exported at once (default
	// GOMAXPROCS). Each worker holds one trace's model at a time, so
	// memory is bounded by Workers × the largest trace's model.
	Workers int
	// Force exports inputs again even when their tables are up to date,
	// and replaces a run of the same name that the directory holds from
	// another file with other content (without it, such an input fails
	// with a *ClashError and the existing run is kept).
	Force bool
	// MaxMemory caps the trace models of all workers together, in bytes:
	// each read gets an equal share and stops with an error naming the
	// file when its model would pass it. 0 means
	// ingest.DefaultMaxMemory(); negative means no cap. The ranks of a
	// job are read by distributed.Load, Workers at a time, each with the
	// same share.
	MaxMemory int64
	// Analyze selects the analyzers whose findings are exported.
	Analyze analyze.Config
	// StepRange, if set, names the host ranges taken as each trace's
	// steps (ingest.StepsFromRange), as --step-range does for every
	// other command.
	StepRange string
	// Cross configures the cross-rank analysis of jobs: its CommKernel,
	// Enable and Disable (the exporter sets the loading fields).
	Cross distributed.Options
	// Progress, if set, is called (never concurrently) when an input
	// starts, as it is read, and when it is done.
	Progress func(Progress)
}

// Progress is where an export stands.
type Progress struct {
	// Done counts inputs finished (exported, skipped or failed) out of
	// Total; DoneBytes counts the input bytes read or skipped so far (all
	// of a finished input's) out of TotalBytes.
	Done, Total           int
	DoneBytes, TotalBytes int64
	// Current is the input that started or finished.
	Current string
}

// Status says what happened to one input.
type Status int

// The outcomes of exporting one input.
const (
	Exported Status = iota
	// Skipped means the output directory already held this run's tables
	// for the same input content and schema version.
	Skipped
	Failed
	// NotTrace means a file found in a directory is valid JSON but not a
	// trace; it was passed over.
	NotTrace
)

func (s Status) String() string {
	switch s {
	case Exported:
		return "exported"
	case Skipped:
		return "up to date"
	case Failed:
		return "failed"
	case NotTrace:
		return "not a trace"
	}
	return "Status(" + strconv.Itoa(int(s)) + ")"
}

// Outcome is the result of exporting one input.
type Outcome struct {
	Input
	Status Status
	// Err says why the input failed; it names the file.
	Err error
	// ContentHash is "sha256:" and the input file's hash in hex.
	ContentHash string
	// InputBytes is the input file's size; OutputBytes the total size of
	// its Parquet files (also when skipped).
	InputBytes, OutputBytes int64
	// Rows counts the rows written per table (empty when skipped).
	Rows map[string]int64
	// Note, when set, says what the user should know about an exported
	// input (a rank of a job that could not be loaded, exported alone).
	Note string
}

// Run exports every input to opt.Dir, opt.Workers at a time, and returns
// one Outcome per input in input order. A failed input does not stop the
// others; Run's own error is for a problem with the output directory.
func Run(inputs []Input, opt Options) ([]Outcome, error) {
	if opt.Dir == "" {
		return nil, errors.New("export: no output directory")
	}
	for _, tbl := range Tables() {
		if err := os.MkdirAll(filepath.Join(opt.Dir, tbl), 0o755); err != nil {
			return nil, fmt.Errorf("creating output directory: %w", err)
		}
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(min(workers, len(inputs)), 1)
	read := ingest.Options{MaxMemory: opt.MaxMemory}
	if read.MaxMemory == 0 {
		read.MaxMemory = ingest.DefaultMaxMemory()
	}
	if read.MaxMemory > 0 {
		read.MaxMemory /= int64(workers)
	}

	prog := newTracker(inputs, opt.Progress)
	ex := &exporter{opt: opt, read: read, workers: workers, prog: prog, inputs: inputs, out: make([]Outcome, len(inputs))}
	for _, b := range batches(inputs) {
		if b.job != "" {
			ex.job(b.idx)
			continue
		}
		parallel(workers, len(b.idx), func(k int) { ex.one(b.idx[k], nil) })
	}
	return ex.out, nil
}

// exporter is one call of Run: its options, inputs and outcomes.
type exporter struct {
	opt     Options
	read    ingest.Options
	workers int
	prog    *tracker
	inputs  []Input
	out     []Outcome
}

// one exports inputs[i] (rank: its place in its loaded job, nil for a
// lone trace) into out[i], with progress.
func (ex *exporter) one(i int, rank *jobRank) {
	ex.prog.start(i)
	r := ex.read
	if ex.opt.Progress != nil {
		r.Progress = func(n, _ int64) { ex.prog.reading(i, n) }
	}
	ex.out[i] = exportOne(ex.inputs[i], ex.opt, r, rank)
	ex.prog.done(i)
}

// parallel calls fn(0..n-1), workers at a time.
func parallel(workers, n int, fn func(k int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for k := range next {
				fn(k)
			}
		})
	}
	for k := range n {
		next <- k
	}
	close(next)
	wg.Wait()
}

// batch is a set of inputs exported together: the ranks of one job, or
// every input that is not a rank of a job.
type batch struct {
	job string
	idx []int
}

// batches splits inputs into jobs and lone traces, in the order they first
// appear.
func batches(inputs []Input) []batch {
	var out []batch
	at := map[string]int{}
	for i, in := range inputs {
		k, ok := at[in.Job]
		if !ok {
			k = len(out)
			at[in.Job] = k
			out = append(out, batch{job: in.Job})
		}
		out[k].idx = append(out[k].idx, i)
	}
	return out
}

// exportOne exports one input: hash it, skip it when its tables are up to
// date, else read, analyze and write every table. rank is the input's
// place in its job, nil for a lone trace; a rank comes hashed and
// checked for being up to date by loadJob.
func exportOne(in Input, opt Options, read ingest.Options, rank *jobRank) (o Outcome) {
	o = Outcome{Input: in}
	defer func() {
		// A bug in a row builder must not take the other inputs down.
		if r := recover(); r != nil {
			o.Status, o.Err = Failed, fmt.Errorf("%s: internal error while exporting: %v", in.Path, r)
		}
	}()
	id := identity{}
	if rank != nil {
		id = rank.id
		o.ContentHash, o.InputBytes = id.ContentHash, rank.size
	} else {
		hash, size, err := contentHash(in.Path)
		if err != nil {
			o.Status, o.Err = Failed, err
			return o
		}
		id.ContentHash = hash
		o.ContentHash, o.InputBytes = hash, size
		if !opt.Force {
			if err := clash(opt.Dir, in, hash); err != nil {
				o.Status, o.Err = Failed, err
				return o
			}
		}
		if !opt.Force && upToDate(opt.Dir, in.Run, id) {
			o.Status, o.OutputBytes = Skipped, outputBytes(opt.Dir, in.Run)
			return o
		}
	}
	fail := func(err error) Outcome {
		// Tables of an earlier version of this input no longer describe
		// it: a fleet query must not count them.
		removeRun(opt.Dir, in.Run)
		o.Status, o.Err = Failed, err
		return o
	}
	t, err := ingest.ReadFile(in.Path, read)
	var fe *ingest.FormatError
	if in.InDir && rank == nil && errors.As(err, &fe) {
		removeRun(opt.Dir, in.Run)
		o.Status, o.Err = NotTrace, err
		return o
	}
	if err != nil {
		return fail(err)
	}
	m, err := build(in, t, opt)
	if err != nil {
		return fail(err)
	}
	if rank != nil {
		m.setJobRank(rank)
	}
	row := m.runRow(in.source(), id.ContentHash, o.InputBytes)
	rows, err := writeRun(opt.Dir, in, id, m, &row, Tables())
	if err != nil {
		return fail(err)
	}
	o.Status, o.Rows, o.OutputBytes = Exported, rows, outputBytes(opt.Dir, in.Run)
	return o
}

// build analyzes a trace read for in (its steps taken from opt.StepRange
// when set) and returns the model the row builders read.
func build(in Input, t *trace.Trace, opt Options) (*model, error) {
	if opt.StepRange != "" {
		if err := ingest.StepsFromRange(t, opt.StepRange); err != nil {
			return nil, fmt.Errorf("%s: %w", in.Path, err)
		}
	}
	r, err := analyze.Run(t, opt.Analyze)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.Path, err)
	}
	// Run derives steps for traces without ProfilerStep marks; the rows
	// read the trace Run analyzed, and its facts, from its view.
	if n := len(r.View().Trace().Steps); n != len(r.Steps) {
		return nil, fmt.Errorf("%s: analysis has %d steps, its trace %d", in.Path, len(r.Steps), n)
	}
	return newModel(in.Run, r), nil
}

// removeRun deletes run's table files, the runs file (its completion
// mark) first.
func removeRun(dir, run string) {
	tables := Tables()
	slices.Reverse(tables)
	for _, tbl := range tables {
		os.Remove(tablePath(dir, tbl, run))
	}
}

// tablePath is where table's file for run lives under dir.
func tablePath(dir, table, run string) string {
	return filepath.Join(dir, table, run+".parquet")
}

// writeRun writes the named tables of one run (in Tables' order; run is
// the runs table's row). Each file is written under a hidden temporary
// name and renamed into place, the runs table last: a run whose runs file
// exists with the input's hash is complete, so an interrupted export is
// redone, never half-skipped. Errors name the input and the directory.
func writeRun(dir string, in Input, id identity, m *model, run *RunRow, names []string) (rows map[string]int64, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("%s: exporting to %s: %w", in.Path, dir, err)
		}
	}()
	rows = map[string]int64{}
	// Removing the old runs file first means a crash below leaves the run
	// marked incomplete even when its other tables were already replaced.
	if err := os.Remove(tablePath(dir, TableRuns, in.Run)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	write := func(table string, fill func(tmp string) error) error {
		final := tablePath(dir, table, in.Run)
		// The process id keeps two exports into one directory apart.
		tmp := filepath.Join(dir, table, fmt.Sprintf(".%s.parquet.tmp-%d", in.Run, os.Getpid()))
		if err := fill(tmp); err != nil {
			return fmt.Errorf("%s table: %w", table, err)
		}
		return os.Rename(tmp, final)
	}
	tables := []struct {
		name string
		fill func(tmp string) error
	}{
		{TableKernels, func(tmp string) error {
			return writeTable(tmp, TableKernels, id, counting(rows, TableKernels, m.kernels))
		}},
		{TableOps, func(tmp string) error { return writeTable(tmp, TableOps, id, counting(rows, TableOps, m.ops)) }},
		{TableSteps, func(tmp string) error { return writeTable(tmp, TableSteps, id, counting(rows, TableSteps, m.steps)) }},
		{TableLedger, func(tmp string) error { return writeTable(tmp, TableLedger, id, counting(rows, TableLedger, m.ledger)) }},
		{TableLedgerSegments, func(tmp string) error {
			return writeTable(tmp, TableLedgerSegments, id, counting(rows, TableLedgerSegments, m.ledgerSegments))
		}},
		{TableMemory, func(tmp string) error { return writeTable(tmp, TableMemory, id, counting(rows, TableMemory, m.memory)) }},
		{TableCollectives, func(tmp string) error {
			return writeTable(tmp, TableCollectives, id, counting(rows, TableCollectives, m.collectives))
		}},
		{TableFindings, func(tmp string) error {
			return writeTable(tmp, TableFindings, id, counting(rows, TableFindings, m.findings))
		}},
		{TableRuns, func(tmp string) error {
			return writeTable(tmp, TableRuns, id, counting(rows, TableRuns, func(emit func(RunRow) error) error { return emit(*run) }))
		}},
	}
	for _, tbl := range tables {
		if !slices.Contains(names, tbl.name) {
			continue
		}
		if err := write(tbl.name, tbl.fill); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// counting wraps a row builder so the rows it emits are counted in n[table].
func counting[T any](n map[string]int64, table string, build func(func(T) error) error) func(func(T) error) error {
	return func(emit func(T) error) error {
		return build(func(row T) error {
			n[table]++
			return emit(row)
		})
	}
}

// upToDate reports whether every table of run exists in dir, written with
// this SchemaVersion and these columns from input content with the given
// hashes.
func upToDate(dir, run string, id identity) bool {
	for _, tbl := range Tables() {
		meta, err := readMeta(tablePath(dir, tbl, run))
		if err != nil || meta[MetaContentHash] != id.ContentHash || meta[MetaJobHash] != id.JobHash ||
			meta[MetaSchemaVersion] != strconv.Itoa(SchemaVersion) || meta[MetaColumns] != tableColumns(tbl) {
			return false
		}
	}
	return true
}

// outputBytes sums the sizes of run's table files.
func outputBytes(dir, run string) int64 {
	var n int64
	for _, tbl := range Tables() {
		if st, err := os.Stat(tablePath(dir, tbl, run)); err == nil {
			n += st.Size()
		}
	}
	return n
}

// contentHash returns "sha256:HEX" of the file's bytes and its size.
func contentHash(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("%s: %w", path, err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), n, nil
}

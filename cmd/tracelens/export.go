package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tracelens/tracelens/export"
	"github.com/tracelens/tracelens/fixtures"
	"github.com/tracelens/tracelens/ingest"
)

const exportArgs = "[--format parquet] [-o DIR] [-j N] [--force] TRACE|DIR..."

func exportCommand() command {
	return command{name: "export", args: exportArgs, summary: "write traces as Parquet tables (kernels, ops, steps, collectives, findings, runs) for DuckDB, Spark, Trino", run: runExport,
		examples: []string{
			"tracelens export -o tables/ traces/",
			`duckdb -c "select * from read_parquet('tables/kernels/*.parquet')"`,
		}}
}

func runExport(e *env, args []string) error {
	fs := newFlags("export")
	format := fs.String("format", "parquet", "output `FORMAT`: parquet")
	dir := fs.String("o", "tracelens-export", "output `DIR`: one subdirectory per table, one file per trace")
	jobs := fs.Int("j", 0, "export `N` traces at once (default: one per CPU); each holds one trace in memory")
	force := fs.Bool("force", false, "export again even when a trace's tables are up to date, and replace a run of the same name exported from another file")
	pos, err := parseFlags(e, fs, exportArgs, args)
	if err != nil {
		return err
	}
	if *format != "parquet" {
		return usageError{fmt.Sprintf("unknown --format %q (want parquet)", *format)}
	}
	if len(pos) == 0 {
		return usageError{"missing TRACE or DIR argument"}
	}
	if *jobs < 0 {
		return usageError{"-j must be >= 0"}
	}
	if err := refuseOutputOverInput(*dir, pos); err != nil {
		return err
	}
	if err := stdinOnce(pos); err != nil {
		return err
	}
	files, given, cleanup, err := materialize(e, pos)
	defer cleanup()
	if err != nil {
		return err
	}
	inputs, err := export.Inputs(files)
	if err != nil {
		return err
	}
	for i := range inputs {
		inputs[i].Source = given[inputs[i].Path]
	}
	opt := export.Options{Dir: *dir, Workers: *jobs, Force: *force, MaxMemory: e.maxMemory, Analyze: e.cfg, StepRange: e.stepRange}
	if opt.Cross, err = e.run.options(); err != nil {
		return err
	}
	var bar *exportBar
	if e.stderrTTY {
		bar = &exportBar{e: e, start: time.Now()}
		opt.Progress = bar.update
	}
	outs, err := export.Run(inputs, opt)
	if bar != nil {
		bar.done()
	}
	if err != nil {
		return err
	}
	for i := range outs {
		if src := outs[i].Source; src != "" {
			// Say "-", not the copy's temporary path.
			if outs[i].Err != nil {
				outs[i].Err = errors.New(strings.ReplaceAll(outs[i].Err.Error(), outs[i].Path, src))
			}
			outs[i].Path = src
		}
	}
	return reportExport(e, *dir, outs)
}

// materialize copies the traces export cannot read as files, standard
// input (-) and traces compiled into the binary (embedded:NAME), into a
// temporary directory: export hashes a file to know whether its tables are
// up to date, then reads it. It returns the arguments with the copies'
// paths and, per copy, the name the user gave. The copy of standard input
// is named stdin, so its run is "stdin"; an embedded trace keeps its name.
func materialize(e *env, pos []string) (files []string, given map[string]string, cleanup func(), err error) {
	given = map[string]string{}
	cleanup = func() {}
	files = slices.Clone(pos)
	tmp := ""
	for i, p := range pos {
		name, embedded := strings.CutPrefix(p, embeddedPrefix)
		if p != "-" && !embedded {
			continue
		}
		if tmp == "" {
			if tmp, err = os.MkdirTemp("", "tracelens-export"); err != nil {
				return nil, nil, cleanup, err
			}
			cleanup = func() { os.RemoveAll(tmp) }
		}
		var r io.Reader = e.stdin
		if embedded {
			f, oerr := fixtures.Open(name)
			if oerr != nil {
				return nil, nil, cleanup, fmt.Errorf("%s: no such embedded trace (have %s)", p, strings.Join(fixtures.Names(), ", "))
			}
			r = f
		} else {
			name = "stdin"
		}
		files[i] = filepath.Join(tmp, filepath.Base(name))
		if err := copyToFile(files[i], r); err != nil {
			return nil, nil, cleanup, fmt.Errorf("%s: %w", p, err)
		}
		given[files[i]] = p
	}
	return files, given, cleanup, nil
}

// copyToFile writes what r holds to a new file at path.
func copyToFile(path string, r io.Reader) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// reportExport prints one line per input and a total, and turns failures
// into the command's error (exit 2) after the others were exported.
func reportExport(e *env, dir string, outs []export.Outcome) error {
	var in, out int64
	var failed []string
	var notes []string
	exported, skipped, notTrace := 0, 0, 0
	for _, o := range outs {
		switch o.Status {
		case export.Failed:
			msg := o.Err.Error()
			var be *ingest.BudgetError
			if errors.As(o.Err, &be) {
				msg += "; raise the budget with --max-memory SIZE (shared by the -j workers) or export with fewer -j"
			}
			failed = append(failed, msg)
			continue
		case export.NotTrace:
			notTrace++
			fmt.Fprintf(e.stdout, "passed over %s\n", o.Err)
			continue
		case export.Skipped:
			skipped++
			fmt.Fprintf(e.stdout, "%s: up to date (%s)\n", o.Run, o.Path)
		default:
			exported++
			job := ""
			if o.Job != "" && o.Note == "" {
				job = fmt.Sprintf(", %d collectives (job %s)", o.Rows[export.TableCollectives], o.Job)
			}
			fmt.Fprintf(e.stdout, "%s: %d kernels, %d ops, %d steps, %d findings%s (%s)\n", o.Run,
				o.Rows[export.TableKernels], o.Rows[export.TableOps], o.Rows[export.TableSteps], o.Rows[export.TableFindings], job, o.Path)
			// The ranks of a job exported alone share its note: say it
			// once.
			if o.Note != "" && !slices.Contains(notes, o.Note) {
				notes = append(notes, o.Note)
			}
		}
		in += o.InputBytes
		out += o.OutputBytes
	}
	for _, n := range notes {
		fmt.Fprintf(e.stdout, "note: %s\n", n)
	}
	ratio := 0.0
	if in > 0 {
		ratio = float64(out) / float64(in) * 100
	}
	fmt.Fprintf(e.stdout, "%s: %d traces exported, %d up to date, %d failed", dir, exported, skipped, len(failed))
	if notTrace > 0 {
		fmt.Fprintf(e.stdout, ", %d files not traces", notTrace)
	}
	fmt.Fprintf(e.stdout, "; %s of Parquet for %s of traces (%.1f%%)\n", megabytes(out), megabytes(in), ratio)
	if len(failed) > 0 {
		return errors.New(strings.Join(failed, "\n"))
	}
	return nil
}

func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// exportBar draws "exporting [=====>    ] 12/64 traces, 1.2/5.0 GB" on
// stderr once an export has run long enough to need it.
type exportBar struct {
	e     *env
	start time.Time
	last  time.Time
	drawn bool
}

func (b *exportBar) update(p export.Progress) {
	now := time.Now()
	if p.Done < p.Total && (now.Sub(b.start) < 200*time.Millisecond || now.Sub(b.last) < 100*time.Millisecond) {
		return
	}
	b.last = now
	const width = 30
	frac := 0.0
	if p.TotalBytes > 0 {
		frac = min(float64(p.DoneBytes)/float64(p.TotalBytes), 1)
	}
	n := int(frac * width)
	fmt.Fprintf(b.e.stderr, "\r\033[Kexporting [%s%s] %d/%d traces, %s/%s", strings.Repeat("=", n), strings.Repeat(" ", width-n),
		p.Done, p.Total, megabytes(p.DoneBytes), megabytes(p.TotalBytes))
	b.drawn = true
}

func (b *exportBar) done() {
	if b.drawn {
		fmt.Fprint(b.e.stderr, "\r\033[K")
	}
}

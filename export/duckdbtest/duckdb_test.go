//go:build cgo

package duckdbtest

// These tests read the exported tables back with a real engine, DuckDB
// (through its Go binding, which needs cgo), and check on every real
// fixture that a SQL query gives the figures `tracelens top` and `tracelens
// report --format json` print, running the CLI as a subprocess exactly as
// a user would.

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/tracelens/tracelens/export"
)

// fixtureArgs are the repository's real traces as `tracelens export` is
// given them: single-trace fixtures as files, the multi-rank runs as one
// directory (their ranks are all named rank0, rank1).
func fixtureArgs(t *testing.T) []string {
	t.Helper()
	var args []string
	for _, d := range []string{"../../fixtures", "../../fixtures/recorded", "../../fixtures/capture"} {
		m, err := filepath.Glob(filepath.Join(d, "*.json.gz"))
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, m...)
	}
	return append(args, "../../fixtures/runs")
}

// tracesUnderTest lists every exported trace with its run name.
func tracesUnderTest(t *testing.T) []export.Input {
	t.Helper()
	ins, err := export.Inputs(fixtureArgs(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(ins) < 50 {
		t.Fatalf("found %d fixtures, expected the repository's 50+", len(ins))
	}
	return ins
}

var cli struct {
	once sync.Once
	path string
	err  error
}

// tracelens builds the CLI once per test binary and returns its path.
func tracelens(t *testing.T) string {
	t.Helper()
	cli.once.Do(func() {
		dir, err := os.MkdirTemp("", "tracelens-export-test")
		if err != nil {
			cli.err = err
			return
		}
		cli.path = filepath.Join(dir, "tracelens")
		// Built by the root module (run from the repository root), so the
		// binary is the one users get, without this module's DuckDB.
		build := exec.Command("go", "build", "-o", cli.path, "./cmd/tracelens")
		build.Dir = "../.."
		out, err := build.CombinedOutput()
		if err != nil {
			cli.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if cli.err != nil {
		t.Fatal(cli.err)
	}
	return cli.path
}

// cliOutput runs the CLI and returns its standard output.
func cliOutput(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(tracelens(t), args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tracelens %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

var exports struct {
	once sync.Once
	dir  string
	err  error
}

// TestMain removes what the tests built and exported once for all of them.
func TestMain(m *testing.M) {
	code := m.Run()
	if cli.path != "" {
		os.RemoveAll(filepath.Dir(cli.path))
	}
	if exports.dir != "" {
		os.RemoveAll(exports.dir)
	}
	os.Exit(code)
}

// exported exports every fixture with the CLI (once per test binary) and
// opens DuckDB over the tables.
func exported(t *testing.T) (string, *sql.DB) {
	t.Helper()
	exports.once.Do(func() {
		exports.dir, exports.err = os.MkdirTemp("", "tracelens-export-tables")
		if exports.err == nil {
			cliOutput(t, append([]string{"export", "-o", exports.dir}, fixtureArgs(t)...)...)
		}
	})
	if exports.err != nil {
		t.Fatal(exports.err)
	}
	dir := exports.dir
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return dir, db
}

// table is DuckDB's read_parquet over every file of one table.
func table(dir, name string) string {
	return fmt.Sprintf("read_parquet('%s')", filepath.Join(dir, name, "*.parquet"))
}

type kernelTotal struct {
	Count   int64
	TotalNs int64
}

// kernelKey names a row of top's and report's kernel tables: one kernel
// name can have two, the workload's launches and those torch.compile's
// autotuner made.
type kernelKey struct {
	Name     string
	Autotune bool
}

// kernelTotals queries the kernels table: per run, kernel name and
// autotune mark, the number of launches and their total duration.
func kernelTotals(t *testing.T, db *sql.DB, dir string) map[string]map[kernelKey]kernelTotal {
	t.Helper()
	rows, err := db.Query(`select run, name, autotune, count(*), sum(duration_ns) from ` + table(dir, "kernels") + ` where kind = 'kernel' group by run, name, autotune`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]map[kernelKey]kernelTotal{}
	for rows.Next() {
		var run string
		var key kernelKey
		var k kernelTotal
		if err := rows.Scan(&run, &key.Name, &key.Autotune, &k.Count, &k.TotalNs); err != nil {
			t.Fatal(err)
		}
		if got[run] == nil {
			got[run] = map[kernelKey]kernelTotal{}
		}
		got[run][key] = k
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// byName adds up the autotune and workload rows of each kernel name.
func byName(rows map[kernelKey]kernelTotal) map[string]kernelTotal {
	out := map[string]kernelTotal{}
	for k, v := range rows {
		o := out[k.Name]
		o.Count += v.Count
		o.TotalNs += v.TotalNs
		out[k.Name] = o
	}
	return out
}

// TestDuckDBKernelTotalsMatchTop: per fixture, a GROUP BY over the kernels
// table gives top's count and total for every kernel, and the independent
// Python decode of the raw JSON (testdata/kernel_totals.py) agrees to the
// nanosecond.
func TestDuckDBKernelTotalsMatchTop(t *testing.T) {
	dir, db := exported(t)
	got := kernelTotals(t, db, dir)
	for _, in := range tracesUnderTest(t) {
		f, run := in.Path, in.Run
		var top struct {
			Kernels []struct {
				Name     string  `json:"name"`
				Autotune bool    `json:"autotune"`
				Count    int64   `json:"count"`
				TotalUs  float64 `json:"total_us"`
			} `json:"kernels"`
		}
		if err := json.Unmarshal(cliOutput(t, "top", "-n", "0", "--format", "json", f), &top); err != nil {
			t.Fatal(err)
		}
		if len(got[run]) != len(top.Kernels) {
			t.Errorf("%s: DuckDB finds %d distinct kernels, top %d", run, len(got[run]), len(top.Kernels))
		}
		for _, k := range top.Kernels {
			g := got[run][kernelKey{k.Name, k.Autotune}]
			if g.Count != k.Count || math.Abs(float64(g.TotalNs)-k.TotalUs*1e3) > 0.5 {
				t.Errorf("%s: kernel %.60s: DuckDB %d launches, %d ns; top %d launches, %.3f µs", run, k.Name, g.Count, g.TotalNs, k.Count, k.TotalUs)
			}
		}
	}

	var want map[string]map[string][2]int64
	b, err := os.ReadFile("testdata/kernel_totals.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) < 15 {
		t.Fatalf("kernel_totals.json covers %d traces; regenerate it (see kernel_totals.py)", len(want))
	}
	runOf := map[string]string{}
	for _, in := range tracesUnderTest(t) {
		runOf[strings.TrimPrefix(filepath.ToSlash(in.Path), "../../")] = in.Run
	}
	for file, kernels := range want {
		run, ok := runOf[file]
		if !ok {
			t.Errorf("kernel_totals.json has %s, which is not exported; regenerate it", file)
		}
		names := byName(got[run])
		if len(names) != len(kernels) {
			t.Errorf("%s: DuckDB finds %d distinct kernel names, the Python decode %d", run, len(names), len(kernels))
		}
		for name, w := range kernels {
			if g := names[name]; g.Count != w[0] || g.TotalNs != w[1] {
				t.Errorf("%s: kernel %.60s: DuckDB %d launches, %d ns; Python %d launches, %d ns", run, name, g.Count, g.TotalNs, w[0], w[1])
			}
		}
	}
}

// reportJSON is the part of `report --format json` the tables must agree
// with.
type reportJSON struct {
	StepStats struct {
		Count                  int     `json:"count"`
		MedianWallUs           float64 `json:"median_wall_us"`
		MedianWallUsNoFirst    float64 `json:"median_wall_us_no_first"`
		MedianGPUBusyUs        float64 `json:"median_gpu_busy_us"`
		MedianGPUBusyUsNoFirst float64 `json:"median_gpu_busy_us_no_first"`
		MedianLaunches         float64 `json:"median_launches"`
		SteadyWallUs           float64 `json:"steady_wall_us"`
	} `json:"step_stats"`
	Findings []struct {
		ID       string  `json:"id"`
		Subject  string  `json:"subject"`
		Severity string  `json:"severity"`
		SavingNs int64   `json:"saving_ns"`
		GPUUs    float64 `json:"gpu_saving_us"`
		OneOffUs float64 `json:"one_off_us"`
	} `json:"findings"`
}

var reports struct {
	sync.Mutex
	byFile map[string][]byte
}

// report returns `tracelens report --format json FILE`, run once per file.
func report(t *testing.T, file string) []byte {
	t.Helper()
	reports.Lock()
	defer reports.Unlock()
	if b, ok := reports.byFile[file]; ok {
		return b
	}
	if reports.byFile == nil {
		reports.byFile = map[string][]byte{}
	}
	b := cliOutput(t, "report", "--format", "json", file)
	reports.byFile[file] = b
	return b
}

// TestDuckDBAttributionMatchesReport: per kernel name, the op and the
// Python line most of its launches carry in the kernels table are the
// first ones `report --format json` lists for it (ties by name, as the
// report breaks them), and its category is the report's.
func TestDuckDBAttributionMatchesReport(t *testing.T) {
	dir, db := exported(t)
	type attribution struct{ op, python, category string }
	type key struct {
		run string
		kernelKey
	}
	got := map[key]*attribution{}
	top := func(col string) {
		rows, err := db.Query(`
			select run, name, autotune, ` + col + ` from (
				select run, name, autotune, ` + col + `, row_number() over (partition by run, name, autotune order by count(*) desc, ` + col + `) as r
				from ` + table(dir, "kernels") + ` where kind = 'kernel' and ` + col + ` is not null group by run, name, autotune, ` + col + `)
			where r = 1`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var k key
			var v string
			if err := rows.Scan(&k.run, &k.Name, &k.Autotune, &v); err != nil {
				t.Fatal(err)
			}
			a := got[k]
			if a == nil {
				a = &attribution{}
				got[k] = a
			}
			switch col {
			case "op":
				a.op = v
			case "python":
				a.python = v
			case "category":
				a.category = v
			}
		}
	}
	top("op")
	top("python")
	top("category")
	withPython := 0
	for _, in := range tracesUnderTest(t) {
		run := in.Run
		var rep struct {
			Kernels []struct {
				Name     string   `json:"name"`
				Autotune bool     `json:"autotune"`
				Category string   `json:"category"`
				Ops      []string `json:"ops"`
				Python   []string `json:"python"`
			} `json:"kernels"`
		}
		if err := json.Unmarshal(report(t, in.Path), &rep); err != nil {
			t.Fatal(err)
		}
		for _, k := range rep.Kernels {
			a := got[key{run, kernelKey{k.Name, k.Autotune}}]
			if a == nil {
				a = &attribution{}
			}
			var op, py string
			if len(k.Ops) > 0 {
				op = k.Ops[0]
			}
			if len(k.Python) > 0 {
				py = k.Python[0]
				withPython++
			}
			if a.op != op || a.python != py || a.category != k.Category {
				t.Errorf("%s: kernel %.60s: DuckDB op %q python %q category %s; report %q %q %s", run, k.Name, a.op, a.python, a.category, op, py, k.Category)
			}
		}
	}
	if withPython == 0 {
		t.Fatal("no kernel with a Python line in any fixture: the comparison tested nothing")
	}
}

// TestDuckDBStepMediansAndFindingsMatchReport: per fixture, medians over
// the steps table (all steps, and all but the first) and the findings
// table in ranking order equal what `report --format json` says.
func TestDuckDBStepMediansAndFindingsMatchReport(t *testing.T) {
	dir, db := exported(t)
	type medians struct{ n, wall, wallNoFirst, busy, busyNoFirst, launches float64 }
	steps := map[string]medians{}
	rows, err := db.Query(`
		with s as (select *, row_number() over (partition by run order by start) as i from ` + table(dir, "steps") + `)
		select run, count(*), median(wall_ns), coalesce(median(wall_ns) filter (where i > 1), median(wall_ns)),
		       median(gpu_busy_ns), coalesce(median(gpu_busy_ns) filter (where i > 1), median(gpu_busy_ns)), median(launches)
		from s group by run`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var run string
		var m medians
		if err := rows.Scan(&run, &m.n, &m.wall, &m.wallNoFirst, &m.busy, &m.busyNoFirst, &m.launches); err != nil {
			t.Fatal(err)
		}
		steps[run] = m
	}
	rows.Close()

	type finding struct {
		id, subject, severity     string
		savingNs, gpuNs, oneOffNs int64
	}
	findings := map[string][]finding{}
	rows, err = db.Query(`select run, id, subject, severity, saving_ns, gpu_saving_ns, one_off_ns from ` + table(dir, "findings") + ` order by run, position`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var run string
		var f finding
		if err := rows.Scan(&run, &f.id, &f.subject, &f.severity, &f.savingNs, &f.gpuNs, &f.oneOffNs); err != nil {
			t.Fatal(err)
		}
		// A rank of a run also lists the run's cross-rank findings,
		// ranked with its own (TestRunFacesAgree checks those): the
		// report of its file alone has only its own.
		if f.id == "straggler" || f.id == "exposed-comm" || f.id == "comm-bandwidth" || f.id == "pipeline-bubble" || f.id == "alltoall-imbalance" {
			continue
		}
		findings[run] = append(findings[run], f)
	}
	rows.Close()

	near := func(ns, us float64) bool { return math.Abs(ns-us*1e3) <= 0.5 }
	total := 0
	for _, in := range tracesUnderTest(t) {
		run := in.Run
		var rep reportJSON
		if err := json.Unmarshal(report(t, in.Path), &rep); err != nil {
			t.Fatal(err)
		}
		s, m := rep.StepStats, steps[run]
		if int(m.n) != s.Count || !near(m.wall, s.MedianWallUs) || !near(m.wallNoFirst, s.MedianWallUsNoFirst) ||
			!near(m.busy, s.MedianGPUBusyUs) || !near(m.busyNoFirst, s.MedianGPUBusyUsNoFirst) || m.launches != s.MedianLaunches ||
			!near(m.wallNoFirst, s.SteadyWallUs) {
			t.Errorf("%s: DuckDB step medians %+v, report %+v", run, m, s)
		}
		got := findings[run]
		if len(got) != len(rep.Findings) {
			t.Errorf("%s: DuckDB has %d findings, report %d", run, len(got), len(rep.Findings))
			continue
		}
		for i, w := range rep.Findings {
			if g := got[i]; g.id != w.ID || g.subject != w.Subject || g.severity != w.Severity || g.savingNs != w.SavingNs ||
				!near(float64(g.gpuNs), w.GPUUs) || !near(float64(g.oneOffNs), w.OneOffUs) {
				t.Errorf("%s: finding %d: DuckDB %+v, report %+v", run, i, g, w)
			}
		}
		total += len(got)
	}
	if total == 0 {
		t.Fatal("no findings in any fixture: the comparison tested nothing")
	}
	var gpu, oneOff int
	if err := db.QueryRow(`select count(*) filter (where gpu_saving_ns > 0), count(*) filter (where one_off_ns > 0) from `+
		table(dir, "findings")).Scan(&gpu, &oneOff); err != nil || gpu == 0 || oneOff == 0 {
		t.Errorf("findings with a GPU-time saving %d, with a one-time cost %d (%v): the new columns were not exercised", gpu, oneOff, err)
	}
}

// TestDuckDBStepPhasesMatchReport: per fixture and step, the steps
// table's phase split (forward/backward/optimizer kernel time) and busy
// split (compute/communication) equal `report --format json`'s steps[],
// and some fixture has backward, optimizer and communication time (so the
// comparison is not of zeros only).
func TestDuckDBStepPhasesMatchReport(t *testing.T) {
	dir, db := exported(t)
	type phases struct{ fwd, bwd, opt, compute, comm float64 }
	got := map[string][]phases{}
	rows, err := db.Query(`select run, forward_ns, backward_ns, optimizer_ns, compute_busy_ns, communication_ns from ` +
		table(dir, "steps") + ` order by run, start`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var run string
		var p phases
		if err := rows.Scan(&run, &p.fwd, &p.bwd, &p.opt, &p.compute, &p.comm); err != nil {
			t.Fatal(err)
		}
		got[run] = append(got[run], p)
	}
	rows.Close()
	near := func(ns, us float64) bool { return math.Abs(ns-us*1e3) <= 0.5 }
	var bwd, opt, comm bool
	for _, in := range tracesUnderTest(t) {
		var rep struct {
			Steps []struct {
				ForwardUs       float64 `json:"forward_us"`
				BackwardUs      float64 `json:"backward_us"`
				OptimizerUs     float64 `json:"optimizer_us"`
				ComputeBusyUs   float64 `json:"compute_busy_us"`
				CommunicationUs float64 `json:"communication_us"`
			} `json:"steps"`
		}
		if err := json.Unmarshal(report(t, in.Path), &rep); err != nil {
			t.Fatal(err)
		}
		g := got[in.Run]
		if len(g) != len(rep.Steps) {
			t.Errorf("%s: DuckDB has %d steps, report %d", in.Run, len(g), len(rep.Steps))
			continue
		}
		for i, w := range rep.Steps {
			if p := g[i]; !near(p.fwd, w.ForwardUs) || !near(p.bwd, w.BackwardUs) || !near(p.opt, w.OptimizerUs) ||
				!near(p.compute, w.ComputeBusyUs) || !near(p.comm, w.CommunicationUs) {
				t.Errorf("%s: step %d: DuckDB %+v ns, report %+v µs", in.Run, i, p, w)
			}
			bwd = bwd || w.BackwardUs > 0
			opt = opt || w.OptimizerUs > 0
			comm = comm || w.CommunicationUs > 0
		}
	}
	if !bwd || !opt || !comm {
		t.Fatalf("no fixture step with backward (%v), optimizer (%v) or communication (%v) time: the comparison tested zeros", bwd, opt, comm)
	}
}

// TestDuckDBReadsTypes: the engine sees instants as timestamps with
// nanoseconds kept, lengths of time as BIGINT, and one runs row per trace.
func TestDuckDBReadsTypes(t *testing.T) {
	dir, db := exported(t)
	types := map[string]string{}
	rows, err := db.Query(`select column_name, column_type from (describe select * from ` + table(dir, "kernels") + `)`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			t.Fatal(err)
		}
		types[name] = typ
	}
	rows.Close()
	for col, want := range map[string]string{"start": "TIMESTAMP_NS", "duration_ns": "BIGINT", "name": "VARCHAR", "step": "INTEGER"} {
		if types[col] != want {
			t.Errorf("kernels.%s is %s in DuckDB, want %s", col, types[col], want)
		}
	}
	// Kineto stamps events to the nanosecond (decimal microseconds): the
	// engine must see those nanoseconds, and the first kernel of a run
	// cannot start before the run does.
	var subMicro, early int
	err = db.QueryRow(`select count(*) filter (where epoch_ns(k.start) % 1000 <> 0), count(*) filter (where k.start < r.start) from `+
		table(dir, "kernels")+` k join `+table(dir, "runs")+` r using (run)`).Scan(&subMicro, &early)
	if err != nil {
		t.Fatal(err)
	}
	if subMicro == 0 || early != 0 {
		t.Errorf("%d kernel starts with sub-µs digits (want some), %d before their run's start (want none)", subMicro, early)
	}
	var runs, distinct int
	if err := db.QueryRow(`select count(*), count(distinct content_hash) from `+table(dir, "runs")).Scan(&runs, &distinct); err != nil {
		t.Fatal(err)
	}
	if n := len(tracesUnderTest(t)); runs != n {
		t.Errorf("runs table has %d rows for %d traces", runs, n)
	}
	var names []string
	rows, err = db.Query(`select distinct kind from ` + table(dir, "kernels"))
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		rows.Scan(&k)
		names = append(names, k)
	}
	rows.Close()
	sort.Strings(names)
	if strings.Join(names, ",") != "kernel,memcpy,memset" {
		t.Errorf("kinds in the kernels table: %v", names)
	}
}

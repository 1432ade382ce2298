//go:build cgo

package duckdbtest

import (
	"database/sql"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runDirs are the multi-rank runs the collectives tests check: every
// directory of fixtures/runs (2-rank runs: DDP with a host and a
// compute straggler, balanced DDP, FSDP, two process groups, pipeline
// send/recv, MoE all-to-all, a shifting straggler).
func runDirs(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob("../../fixtures/runs/*")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range dirs {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			out = append(out, d)
		}
	}
	if len(out) < 2 {
		t.Fatalf("%d run directories under ../../fixtures/runs", len(out))
	}
	return out
}

// jobOf is the job name `tracelens export ../fixtures/runs` gives a run
// directory.
func jobOf(dir string) string { return "runs__" + filepath.Base(dir) }

// rankKey names one rank of one job.
type rankKey struct {
	Job  string
	Rank int
}

// queryRows runs q and calls scan for each row.
func queryRows(t *testing.T, db *sql.DB, q string, scan func(*sql.Rows) error) {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			t.Fatal(err)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestDuckDBCollectivesMatchPython: per rank of every run, SQL over the
// collectives table gives the communication kernels' count per kind, their
// total duration to the nanosecond, how many carry collective arguments
// and their total bytes, as the independent decode of the rank JSONs
// (testdata/collectives.py) does; and the rank and world size columns
// are the traces' distributedInfo.
func TestDuckDBCollectivesMatchPython(t *testing.T) {
	dir, db := exported(t)
	type figures struct {
		WorldSize  int              `json:"world_size"`
		Kernels    int64            `json:"kernels"`
		DurationNs int64            `json:"duration_ns"`
		WithArgs   int64            `json:"with_args"`
		Bytes      int64            `json:"bytes"`
		Kinds      map[string]int64 `json:"kinds"`
	}
	var want map[string]map[string]figures
	b, err := os.ReadFile("testdata/collectives.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	got := map[rankKey]*figures{}
	queryRows(t, db, `select job, rank, any_value(world_size), count(*), sum(duration_ns), count(in_nelems), coalesce(sum(bytes), 0)
		from `+table(dir, "collectives")+` group by job, rank`, func(r *sql.Rows) error {
		var k rankKey
		f := &figures{Kinds: map[string]int64{}}
		err := r.Scan(&k.Job, &k.Rank, &f.WorldSize, &f.Kernels, &f.DurationNs, &f.WithArgs, &f.Bytes)
		got[k] = f
		return err
	})
	queryRows(t, db, `select job, rank, kind, count(*) from `+table(dir, "collectives")+` group by all`, func(r *sql.Rows) error {
		var k rankKey
		var kind string
		var n int64
		if err := r.Scan(&k.Job, &k.Rank, &kind, &n); err != nil {
			return err
		}
		if got[k] != nil {
			got[k].Kinds[kind] = n
		}
		return nil
	})
	dirs := runDirs(t)
	if len(want) != len(dirs) {
		t.Errorf("collectives.json covers %d runs, fixtures/runs has %d: regenerate it (see collectives.py)", len(want), len(dirs))
	}
	checked := 0
	for _, d := range dirs {
		ranks := want[strings.TrimPrefix(filepath.ToSlash(filepath.Clean(d)), "../../")]
		for rank, w := range ranks {
			var k rankKey
			k.Job = jobOf(d)
			if err := json.Unmarshal([]byte(rank), &k.Rank); err != nil {
				t.Fatal(err)
			}
			g := got[k]
			if g == nil {
				t.Errorf("%s rank %d: no collectives rows", k.Job, k.Rank)
				continue
			}
			if g.WorldSize != w.WorldSize || g.Kernels != w.Kernels || g.DurationNs != w.DurationNs || g.WithArgs != w.WithArgs || g.Bytes != w.Bytes {
				t.Errorf("%s rank %d: DuckDB world %d, %d kernels, %d ns, %d with arguments, %d bytes; Python world %d, %d, %d ns, %d, %d bytes",
					k.Job, k.Rank, g.WorldSize, g.Kernels, g.DurationNs, g.WithArgs, g.Bytes, w.WorldSize, w.Kernels, w.DurationNs, w.WithArgs, w.Bytes)
			}
			for kind, n := range w.Kinds {
				if g.Kinds[kind] != n {
					t.Errorf("%s rank %d: %d %s kernels in DuckDB, %d in Python", k.Job, k.Rank, g.Kinds[kind], kind, n)
				}
			}
			if len(g.Kinds) != len(w.Kinds) {
				t.Errorf("%s rank %d: kinds %v in DuckDB, %v in Python", k.Job, k.Rank, g.Kinds, w.Kinds)
			}
			checked++
		}
	}
	if checked < 4 {
		t.Fatalf("checked %d ranks", checked)
	}
}

// runReportJSON is the part of `tracelens report --format json DIR` the
// collectives table must agree with (docs/distributed-json.md).
type runReportJSON struct {
	Ranks []struct {
		Rank          int     `json:"rank"`
		Source        string  `json:"source"`
		CommKernels   int64   `json:"comm_kernels"`
		CommKernelUs  float64 `json:"comm_kernel_us"`
		ExposedCommUs float64 `json:"exposed_comm_us"`
		WaitUs        float64 `json:"wait_us"`
		TransferUs    float64 `json:"transfer_us"`
		StartSkewUs   float64 `json:"start_skew_us"`
		EndSkewUs     float64 `json:"end_skew_us"`
	} `json:"ranks"`
	Distributed struct {
		WorldSize   int   `json:"world_size"`
		Collectives int64 `json:"collectives"`
		Dimensions  []struct {
			Dimension   string `json:"dimension"`
			Collectives int64  `json:"collectives"`
			Bytes       int64  `json:"bytes"`
		} `json:"dimensions"`
		Straggler *struct {
			Rank int `json:"rank"`
		} `json:"straggler"`
	} `json:"distributed"`
}

// runReport returns `tracelens report --format json DIR` for a run
// directory (run once per directory, see report).
func runReport(t *testing.T, dir string) runReportJSON {
	t.Helper()
	var rep runReportJSON
	if err := json.Unmarshal(report(t, filepath.Clean(dir)), &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestDuckDBCollectivesMatchReport: per rank of every run, SQL over the
// collectives table gives the ranks section of `tracelens report --format
// json DIR` (docs/distributed-json.md): kernel count and time, exposed
// time, wait and transfer over matched collectives, mean start and end skew; per
// dimension the matched collectives and their bytes; and every table's
// rank and world_size columns agree with the report's ranks.
func TestDuckDBCollectivesMatchReport(t *testing.T) {
	dir, db := exported(t)
	type rankFigures struct {
		Kernels                                 int64
		KernelNs, ExposedNs, WaitNs, TransferNs int64
		StartSkewNs, EndSkewNs                  float64
		WorldSize                               int
	}
	got := map[rankKey]rankFigures{}
	queryRows(t, db, `select job, rank, any_value(world_size), count(*), sum(duration_ns), sum(exposed_ns),
			coalesce(sum(wait_ns), 0), coalesce(sum(transfer_ns), 0), coalesce(avg(arrive_skew_ns), 0), coalesce(avg(leave_skew_ns), 0)
		from `+table(dir, "collectives")+` group by job, rank`, func(r *sql.Rows) error {
		var k rankKey
		var f rankFigures
		err := r.Scan(&k.Job, &k.Rank, &f.WorldSize, &f.Kernels, &f.KernelNs, &f.ExposedNs, &f.WaitNs, &f.TransferNs, &f.StartSkewNs, &f.EndSkewNs)
		got[k] = f
		return err
	})
	type dimFigures struct{ Collectives, Bytes int64 }
	dims := map[string]dimFigures{}
	// One row per collective call; its bytes are the lowest rank's (the
	// report's): an all-to-all with uneven splits moves different bytes
	// on each rank.
	queryRows(t, db, `select job, dimension, count(*), sum(bytes) from (
			select job, pg_name, seq, dimension, arg_min(bytes, rank) as bytes from `+table(dir, "collectives")+` where matched
			group by job, pg_name, seq, dimension)
		group by job, dimension`, func(r *sql.Rows) error {
		var job, dim string
		var f dimFigures
		err := r.Scan(&job, &dim, &f.Collectives, &f.Bytes)
		dims[job+"/"+dim] = f
		return err
	})
	// The rank columns of every table: one (rank, world_size) per run.
	rankOf := map[string][2]int{}
	for _, tbl := range []string{"kernels", "ops", "steps", "findings", "runs"} {
		queryRows(t, db, `select run, min(rank), max(rank), min(world_size), max(world_size), count(*), count(rank)
			from `+table(dir, tbl)+` where run like 'runs\_\_%' escape '\' group by run`, func(r *sql.Rows) error {
			var run string
			var lo, hi, wlo, whi sql.NullInt64
			var n, withRank int64
			if err := r.Scan(&run, &lo, &hi, &wlo, &whi, &n, &withRank); err != nil {
				return err
			}
			if n != withRank || lo != hi || wlo != whi {
				t.Errorf("%s table, run %s: rank %v..%v, world size %v..%v, %d of %d rows with a rank", tbl, run, lo, hi, wlo, whi, withRank, n)
			}
			if prev, ok := rankOf[run]; ok && prev != [2]int{int(lo.Int64), int(wlo.Int64)} {
				t.Errorf("%s table, run %s: rank %d of %d, other tables %v", tbl, run, lo.Int64, wlo.Int64, prev)
			}
			rankOf[run] = [2]int{int(lo.Int64), int(wlo.Int64)}
			return nil
		})
	}
	checked := 0
	for _, d := range runDirs(t) {
		job := jobOf(d)
		rep := runReport(t, d)
		near := func(ns int64, us float64) bool { return math.Abs(float64(ns)/1e3-us) < 0.0015 }
		for _, rr := range rep.Ranks {
			g, ok := got[rankKey{job, rr.Rank}]
			if !ok {
				t.Errorf("%s rank %d: no collectives rows", job, rr.Rank)
				continue
			}
			if g.Kernels != rr.CommKernels || !near(g.KernelNs, rr.CommKernelUs) || !near(g.ExposedNs, rr.ExposedCommUs) ||
				!near(g.WaitNs, rr.WaitUs) || !near(g.TransferNs, rr.TransferUs) || math.Abs(g.StartSkewNs/1e3-rr.StartSkewUs) > 0.0015 ||
				math.Abs(g.EndSkewNs/1e3-rr.EndSkewUs) > 0.0015 ||
				g.WorldSize != rep.Distributed.WorldSize {
				t.Errorf("%s rank %d: DuckDB %+v; report %+v, world size %d", job, rr.Rank, g, rr, rep.Distributed.WorldSize)
			}
			run := strings.TrimSuffix(strings.TrimSuffix(job+"__"+strings.TrimSuffix(filepath.Base(rr.Source), ".gz"), ".json"), ".pt.trace")
			if rankOf[run] != [2]int{rr.Rank, rep.Distributed.WorldSize} {
				t.Errorf("%s: tables say rank %v, report rank %d of %d", run, rankOf[run], rr.Rank, rep.Distributed.WorldSize)
			}
			checked++
		}
		var total int64
		for _, dm := range rep.Distributed.Dimensions {
			g := dims[job+"/"+dm.Dimension]
			total += g.Collectives
			if g.Collectives != dm.Collectives || g.Bytes != dm.Bytes {
				t.Errorf("%s dimension %s: DuckDB %d collectives, %d bytes; report %d, %d bytes", job, dm.Dimension, g.Collectives, g.Bytes, dm.Collectives, dm.Bytes)
			}
		}
		if total != rep.Distributed.Collectives {
			t.Errorf("%s: DuckDB %d matched collectives, report %d", job, total, rep.Distributed.Collectives)
		}
	}
	if checked < 4 {
		t.Fatalf("checked %d ranks", checked)
	}
	// A trace exported on its own has no rank: NULL, never a guess.
	queryRows(t, db, `select count(*) from `+table(dir, "kernels")+` where rank is not null and run not like 'runs\_\_%' escape '\'`, func(r *sql.Rows) error {
		var n int64
		if err := r.Scan(&n); err != nil {
			return err
		}
		if n != 0 {
			t.Errorf("%d kernel rows of lone traces have a rank", n)
		}
		return nil
	})
}

// TestDuckDBReadmeSlowestRank runs the README's "slowest rank per
// collective call" query over the exported fixtures: it must name the
// straggler `tracelens report --format json DIR` names in both straggler
// runs, and count every rank's wait once (its total is the sum of the
// ranks' wait_us).
func TestDuckDBReadmeSlowestRank(t *testing.T) {
	dir, db := exported(t)
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const mark = "```sql\n-- slowest rank per collective call\n"
	i := strings.Index(string(b), mark)
	if i < 0 {
		t.Fatal("README has no slowest-rank query")
	}
	q, _, ok := strings.Cut(string(b[i+len("```sql\n"):]), "```")
	if !ok || !strings.Contains(q, "'traces.parquet/collectives/*.parquet'") {
		t.Fatalf("README's slowest-rank query does not read traces.parquet/collectives: %s", q)
	}
	q = strings.ReplaceAll(q, "'traces.parquet/collectives/*.parquet'", "'"+filepath.Join(dir, "collectives", "*.parquet")+"'")
	type row struct {
		rank     int
		calls    int64
		waitedMs float64
	}
	top := map[string]row{}
	waited := map[string]float64{}
	queryRows(t, db, q, func(r *sql.Rows) error {
		var job string
		var x row
		if err := r.Scan(&job, &x.rank, &x.calls, &x.waitedMs); err != nil {
			return err
		}
		if _, ok := top[job]; !ok {
			top[job] = x
		}
		waited[job] += x.waitedMs
		return nil
	})
	stragglers := 0
	for _, d := range runDirs(t) {
		job := jobOf(d)
		rep := runReport(t, d)
		var wait float64
		for _, r := range rep.Ranks {
			wait += r.WaitUs
		}
		if math.Abs(waited[job]*1e3-wait) > 0.01 {
			t.Errorf("%s: the README query counts %.3f ms of waiting, report's ranks %.3f ms", job, waited[job], wait/1e3)
		}
		if s := rep.Distributed.Straggler; s != nil {
			stragglers++
			if top[job].rank != s.Rank {
				t.Errorf("%s: the README query's slowest rank is %d (%+v), report's straggler %d", job, top[job].rank, top[job], s.Rank)
			}
		}
		t.Logf("%s: slowest rank %d, last at %d calls, others waited %.1f ms", job, top[job].rank, top[job].calls, top[job].waitedMs)
	}
	if stragglers < 2 {
		t.Errorf("report names a straggler in %d runs, want the 2 straggler fixtures", stragglers)
	}
}

// TestDuckDBCollectivesInvariants: over every exported rank, no
// collectives row says what cannot be: a rank outside the world, more
// participants than ranks, negative skew or wait, a transfer or exposed
// time longer than the kernel, a message size that disagrees with its
// element counts, bus bandwidth not within NCCL's factors (0 to 2) of algorithm bandwidth, or cross-rank
// figures on an unmatched kernel.
func TestDuckDBCollectivesInvariants(t *testing.T) {
	dir, db := exported(t)
	checks := map[string]string{
		"rank outside the world":             "rank < 0 or rank >= world_size",
		"more participants than ranks":       "participants > world_size or participants < 2",
		"negative skew or wait":              "arrive_skew_ns < 0 or leave_skew_ns < 0 or wait_ns < 0",
		"transfer longer than the kernel":    "transfer_ns > duration_ns",
		"exposed longer than the kernel":     "exposed_ns > duration_ns or exposed_ns < 0",
		"bytes not the larger of in and out": "bytes <> greatest(in_bytes, out_bytes)",
		"busbw outside (0, 2) × algbw":       "busbw_gbps >= 2 * algbw_gbps or busbw_gbps <= 0 or algbw_gbps <= 0",
		"cross-rank figures when unmatched":  "not matched and (wait_ns is not null or transfer_ns is not null or participants is not null)",
		"matched without them":               "matched and (wait_ns is null or transfer_ns is null or seq is null)",
	}
	var rows int64
	queryRows(t, db, `select count(*) from `+table(dir, "collectives"), func(r *sql.Rows) error { return r.Scan(&rows) })
	if rows < 400 { // 495: five 2-rank runs
		t.Fatalf("%d collectives rows over the fixtures", rows)
	}
	for what, cond := range checks {
		queryRows(t, db, `select count(*), any_value(run) from `+table(dir, "collectives")+` where `+cond, func(r *sql.Rows) error {
			var n int64
			var run sql.NullString
			if err := r.Scan(&n, &run); err != nil {
				return err
			}
			if n > 0 {
				t.Errorf("%d collectives rows with %s (%s), e.g. in %s", n, what, cond, run.String)
			}
			return nil
		})
	}
}

// TestDuckDBCollectivesTypesAndJoin: DuckDB reads the collectives table's
// instants as nanosecond timestamps, and every row is a kernel of the
// same run's kernels table (same name, start and duration), so the two
// tables join on (run, start).
func TestDuckDBCollectivesTypesAndJoin(t *testing.T) {
	dir, db := exported(t)
	types := map[string]string{}
	queryRows(t, db, `select column_name, column_type from (describe select * from `+table(dir, "collectives")+`)`, func(r *sql.Rows) error {
		var name, typ string
		err := r.Scan(&name, &typ)
		types[name] = typ
		return err
	})
	for col, want := range map[string]string{"start": "TIMESTAMP_NS", "launch": "TIMESTAMP_NS", "seq": "BIGINT", "rank": "INTEGER",
		"world_size": "INTEGER", "wait_ns": "BIGINT", "matched": "BOOLEAN", "busbw_gbps": "DOUBLE", "pg_name": "VARCHAR"} {
		if types[col] != want {
			t.Errorf("collectives.%s is %s in DuckDB, want %s", col, types[col], want)
		}
	}
	var rows, orphans, launchedLate int64
	queryRows(t, db, `select count(*),
			count(*) filter (where k.run is null),
			count(*) filter (where c.launch > c.start)
		from `+table(dir, "collectives")+` c left join `+table(dir, "kernels")+` k
			on k.run = c.run and k.start = c.start and k.name = c.kernel and k.duration_ns = c.duration_ns and k.kind = 'kernel'`,
		func(r *sql.Rows) error { return r.Scan(&rows, &orphans, &launchedLate) })
	if rows == 0 || orphans != 0 || launchedLate != 0 {
		t.Errorf("%d collectives rows: %d without their kernel row, %d launched after they started", rows, orphans, launchedLate)
	}
}

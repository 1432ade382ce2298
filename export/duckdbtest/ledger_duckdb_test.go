//go:build cgo

package duckdbtest

import (
	"encoding/json"
	"math"
	"testing"
)

// TestDuckDBLedgerAddsUpToSteps reads the ledger tables back with DuckDB
// over every fixture: per step, the lines' time adds up to the steps
// table's wall (within 0.1 %), the steady rows add up to the report's
// step, each line's segments add up to its time, and every line's time
// is `report --format json`'s.
func TestDuckDBLedgerAddsUpToSteps(t *testing.T) {
	dir, db := exported(t)
	var bad, steps int
	err := db.QueryRow(`
		with l as (select run, step, sum(time_ns) as t, count(*) as n from `+table(dir, "ledger")+` where not steady group by run, step)
		select count(*) filter (where abs(l.t - s.wall_ns) > 0.001 * s.wall_ns or l.n <> 13), count(*)
		from `+table(dir, "steps")+` s left join l using (run, step)`).Scan(&bad, &steps)
	if err != nil {
		t.Fatal(err)
	}
	if bad != 0 || steps == 0 {
		t.Errorf("%d of %d steps: ledger lines missing or not adding up to the steps table's wall_ns within 0.1 %%", bad, steps)
	}
	var segBad, lines int
	err = db.QueryRow(`
		with g as (select run, step, line, sum(duration_ns) as t from `+table(dir, "ledger_segments")+` group by run, step, line)
		select count(*) filter (where abs(coalesce(g.t, 0) - l.time_ns) > 1), count(*)
		from `+table(dir, "ledger")+` l left join g using (run, step, line) where not l.steady`).Scan(&segBad, &lines)
	if err != nil {
		t.Fatal(err)
	}
	if segBad != 0 || lines == 0 {
		t.Errorf("%d of %d ledger lines: their segments do not add up to time_ns", segBad, lines)
	}

	type key struct {
		run, line string
		step      int32
		steady    bool
	}
	got := map[key]int64{}
	rows, err := db.Query(`select run, coalesce(step, -1), steady, line, time_ns from ` + table(dir, "ledger"))
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k key
		var v int64
		if err := rows.Scan(&k.run, &k.step, &k.steady, &k.line, &v); err != nil {
			t.Fatal(err)
		}
		got[k] = v
	}
	rows.Close()
	type entry struct {
		Line string  `json:"line"`
		Us   float64 `json:"us"`
	}
	near := func(ns int64, us float64) bool { return math.Abs(float64(ns)-us*1e3) <= 0.5 }
	nonZero := 0
	for _, in := range tracesUnderTest(t) {
		var rep struct {
			Steps []struct {
				Number int32   `json:"number"`
				Ledger []entry `json:"ledger"`
			} `json:"steps"`
			StepStats struct {
				SteadyWallUs float64 `json:"steady_wall_us"`
				SteadyLedger []entry `json:"steady_ledger"`
			} `json:"step_stats"`
		}
		if err := json.Unmarshal(report(t, in.Path), &rep); err != nil {
			t.Fatal(err)
		}
		for _, s := range rep.Steps {
			for _, e := range s.Ledger {
				if g := got[key{in.Run, e.Line, s.Number, false}]; !near(g, e.Us) {
					t.Errorf("%s: step %d %s: DuckDB %d ns, report %.3f µs", in.Run, s.Number, e.Line, g, e.Us)
				}
			}
		}
		if len(rep.Steps) == 0 {
			continue
		}
		var sum int64
		for _, e := range rep.StepStats.SteadyLedger {
			g := got[key{in.Run, e.Line, -1, true}]
			sum += g
			if !near(g, e.Us) {
				t.Errorf("%s: the step's %s: DuckDB %d ns, report %.3f µs", in.Run, e.Line, g, e.Us)
			}
			if g > 0 {
				nonZero++
			}
		}
		if w := rep.StepStats.SteadyWallUs * 1e3; math.Abs(float64(sum)-w) > 0.001*w {
			t.Errorf("%s: the step's lines add up to %d ns, the step is %.0f ns", in.Run, sum, w)
		}
	}
	if nonZero == 0 {
		t.Fatal("no steady ledger line with time in any fixture: the comparison tested zeros")
	}
}

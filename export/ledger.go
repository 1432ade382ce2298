package export

import (
	"github.com/tracelens/tracelens/analyze"
)

// The step ledger's tables: analyze's split of each step's wall into
// exclusive lines (analyze.Step.Ledger, StepStats.SteadyLedger) and the
// intervals each line is made of (Result.LedgerSegments).

// LedgerRow is one line of one step's ledger, or of the steady step's
// (the step `tracelens report` quotes). Every step has a row for every
// line of analyze.LedgerLines, zeros included, and its rows' TimeNs add
// up to its wall.
type LedgerRow struct {
	Run string `parquet:"run,dict"`
	// Rank and WorldSize are the trace's rank in its multi-rank run and
	// the run's world size (see RunRow.Rank), NULL for a trace exported
	// on its own.
	Rank      *int32 `parquet:"rank,optional"`
	WorldSize *int32 `parquet:"world_size,optional"`
	// Steady is true for the steady step's rows, whose Step is NULL;
	// false for a step's, Step its number (as in the steps table).
	Steady bool   `parquet:"steady"`
	Step   *int32 `parquet:"step,optional"`
	// Position is the line's place in the ledger (0 = gpu_compute), Line
	// its name (analyze.LedgerLines) and LineText the line in words, as
	// the report and the TUI name it.
	Position int32  `parquet:"position"`
	Line     string `parquet:"line,dict"`
	LineText string `parquet:"line_text,dict"`
	// TimeNs is the step's time in the line, WallNs the step's wall
	// (steady rows: the steady step time, the report's "step") and Share
	// TimeNs over WallNs.
	TimeNs int64   `parquet:"time_ns"`
	WallNs int64   `parquet:"wall_ns"`
	Share  float64 `parquet:"share"`
}

// LedgerSegmentRow is one interval of one ledger line in one step: the
// line's time in the step is the sum of its segments' durations.
type LedgerSegmentRow struct {
	Run string `parquet:"run,dict"`
	// Rank and WorldSize are the trace's rank in its multi-rank run and
	// the run's world size (see RunRow.Rank), NULL for a trace exported
	// on its own.
	Rank      *int32 `parquet:"rank,optional"`
	WorldSize *int32 `parquet:"world_size,optional"`
	Step      int32  `parquet:"step"`
	Line      string `parquet:"line,dict"`
	// Start and End bound the interval on the trace's clock, as the
	// other tables' instants.
	Start      int64 `parquet:"start,timestamp(nanosecond:local)"`
	End        int64 `parquet:"end,timestamp(nanosecond:local)"`
	DurationNs int64 `parquet:"duration_ns"`
}

// share is part over whole, 0 for an empty whole.
func share(part, whole int64) float64 {
	if whole <= 0 {
		return 0
	}
	return float64(part) / float64(whole)
}

// ledger emits every step's ledger, then the steady step's.
func (m *model) ledger(emit func(LedgerRow) error) error {
	row := func(step *int32, l []analyze.LedgerEntry, wallUs float64) error {
		wall := ns(wallUs)
		for i, e := range l {
			t := ns(e.Us)
			r := LedgerRow{Run: m.run, Rank: m.rankCol, WorldSize: m.worldCol, Steady: step == nil, Step: step, Position: int32(i),
				Line: e.Line, LineText: analyze.LedgerLineText(e.Line), TimeNs: t, WallNs: wall, Share: share(t, wall)}
			if err := emit(r); err != nil {
				return err
			}
		}
		return nil
	}
	for _, s := range m.r.Steps {
		if err := row(ptr(int32(s.Number)), s.Ledger, s.WallUs); err != nil {
			return err
		}
	}
	if len(m.r.Steps) == 0 {
		return nil
	}
	ss := &m.r.StepStats
	return row(nil, ss.SteadyLedger, ss.SteadyWallUs)
}

// ledgerSegments emits each step's ledger intervals, line by line in
// ledger order, each line's in time order.
func (m *model) ledgerSegments(emit func(LedgerSegmentRow) error) error {
	for i, s := range m.r.Steps {
		for _, line := range analyze.LedgerLines() {
			for _, sp := range m.r.LedgerSegments(i, line) {
				r := LedgerSegmentRow{Run: m.run, Rank: m.rankCol, WorldSize: m.worldCol, Step: int32(s.Number), Line: line,
					Start: m.at(sp.Start), End: m.at(sp.End), DurationNs: int64(sp.Dur())}
				if err := emit(r); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

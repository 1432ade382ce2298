package analyze

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"github.com/tracelens/tracelens/trace"
)

// SchemaVersion is the version of Result's JSON, documented in
// docs/json-schema.md. Adding a field keeps it; changing or removing one
// (a key, a unit, a value's type) bumps it. Version 1 was the JSON before
// findings had typed evidence; it had no schema_version key.
const SchemaVersion = 2

// The severity thresholds: an analyzer rates a finding High when its fix
// saves SeverityHighShare of the step or more, Medium from
// SeverityMediumShare, Low below (lower where the saving is uncertain or
// comes with a trade-off). Tier is the one impact grouping the faces show.
const (
	SeverityHighShare   = 0.10
	SeverityMediumShare = 0.03
)

// Tier is f's impact tier, 1 (High severity) to 3 (Low): the grouping
// the report shows, which never disagrees with the finding's severity.
func (f *Finding) Tier() int {
	switch f.Severity {
	case High:
		return 1
	case Medium:
		return 2
	}
	return 3
}

// Severity and confidence levels of a finding.
const (
	High   = "high"
	Medium = "medium"
	Low    = "low"
)

// MaxTitle is the longest finding title in characters: a title names the
// problem and its size; long lists (a 21-op chain) go in the evidence.
const MaxTitle = 100

// Finding is one problem an analyzer found, with its evidence and fix.
type Finding struct {
	// ID is the analyzer's Name (fusion-candidate, hook-overhead, ...).
	ID    string `json:"id"`
	Title string `json:"title"`
	// Subject names what the finding is about (a kernel, an op chain, a
	// call site) independently of its figures, so two runs' findings can
	// be matched on ID and Subject.
	Subject string `json:"subject"`
	// Severity is High, Medium or Low.
	Severity string `json:"severity"`
	// SavingUs estimates the time saved per step if fixed (the model used
	// is stated in Evidence), at most the steady-state step; SavingNs is
	// the same in integer nanoseconds. Share is it over the steady-state
	// step (StepStats.SteadyWallUs), in [0, 1].
	SavingUs float64 `json:"saving_us"`
	SavingNs int64   `json:"saving_ns"`
	Share    float64 `json:"share"`
	// SavingFrom names the part of the step the saving comes out of (one
	// of the From* constants): findings drawing on the same part overlap.
	SavingFrom string `json:"saving_from"`
	// LedgerLines names the lines of the steady step's ledger
	// (StepStats.SteadyLedger) the saving draws on; the saving is at
	// most their time. Empty for a one-time cost.
	LedgerLines []string `json:"ledger_lines"`
	// GPUSavingUs is, for a saving out of GPU busy time (FromKernelTime),
	// the GPU time the fix saves per step; SavingUs is the part of it on
	// the step's critical path (the kernels' time during which the GPU
	// was the bottleneck: see the Critical fact), since GPU time saved
	// while the host is the bottleneck only lengthens the GPU's idle
	// time. 0 for savings out of idle time.
	GPUSavingUs float64 `json:"gpu_saving_us"`
	// UntracedSavingUs is, for a saving out of host time (GPU idle while
	// the host works), SavingUs for the program run without the profiler:
	// scaled by ProfilerCost.HostFactor, since the profiler's per-event
	// cost inflates exactly that host time. 0 when not estimated.
	UntracedSavingUs float64 `json:"untraced_saving_us,omitempty"`
	// OneOffUs is, for a one-time cost (FromOneOff: a cold start, a
	// compilation, paid once per process or input shape), what the fix
	// saves once; such a finding saves nothing per steady-state step
	// (SavingUs 0): spreading a one-time cost over however many steps the
	// profiler happened to record is not a per-step figure.
	OneOffUs float64 `json:"one_off_us"`
	// Measures are the measured quantities the finding rests on.
	Measures []Measure  `json:"measures"`
	Evidence []Evidence `json:"evidence"`
	Fix      string     `json:"fix"`
	// Confidence is High, Medium or Low.
	Confidence string `json:"confidence"`
	// Ranks are, in the analysis of a multi-rank run (AddRunFindings),
	// the global ranks the finding concerns: the late rank, the ranks
	// whose communication is exposed, or the rank a single-rank finding
	// was found on. Absent for a lone trace.
	Ranks []int `json:"ranks,omitempty"`
	// activities are the GPU activities (Trace.GPU indexes) whose time a
	// FromKernelTime saving comes out of, when the analyzer knows them
	// more exactly than by kernel name (Evidence.Kernels).
	activities []int
	// launchUs is the part of a FromKernelTime saving that is launch
	// overhead (launch calls the fix removes) rather than GPU time: it
	// shortens the step where the host, not the GPU, is the bottleneck.
	launchUs float64
	// splitByAnalyzer marks a finding whose analyzer turned its GPU time
	// into step time itself (fusion-candidate: the GPU idle gaps it
	// removes are measured, not launch calls to scale), so finish leaves
	// SavingUs as it is.
	splitByAnalyzer bool
	// crossRank marks a run's cross-rank finding added by AddRunFindings.
	crossRank bool
}

// The parts of a step a finding's saving can come out of. Savings from
// different parts add up; savings from one part together cannot exceed
// that part's median time per steady-state step.
const (
	// FromKernelTime is GPU busy time: shorter or fewer kernels and copies.
	FromKernelTime = "gpu_busy"
	// FromLaunchGaps is GPU idle time in gaps shorter than LaunchGap.
	FromLaunchGaps = "gpu_idle_launch_gaps"
	// FromHostWaits is GPU idle time in gaps of LaunchGap or longer.
	FromHostWaits = "gpu_idle_long_gaps"
	// FromGPUIdle is GPU idle time of either kind (the analyzer cannot
	// tell which gaps its host work causes).
	FromGPUIdle = "gpu_idle"
	// FromOneOff is a one-time cost outside the steady state (cold
	// start, compilation): the analyzer's SavingUs is that cost, which
	// finish moves to OneOffUs.
	FromOneOff = "one_off"
)

// NoTimeCost reports whether a finding's cost is not time (memory that
// grows every step): it saves nothing per step and nothing once, and
// faces say so instead of printing a saving of zero.
func (f *Finding) NoTimeCost() bool { return f.SavingFrom == FromOneOff && f.OneOffUs == 0 }

// Measure is one measured quantity a finding rests on.
type Measure struct {
	Name  string `json:"name"`
	Value Value  `json:"value"`
}

// MarshalJSON writes a measure flat: {"name", "kind", "unit", "value"}.
func (m Measure) MarshalJSON() ([]byte, error) {
	v, err := m.Value.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return marshalPlain(struct {
		Name  string          `json:"name"`
		Kind  Kind            `json:"kind"`
		Unit  string          `json:"unit,omitempty"`
		Value json.RawMessage `json:"value"`
	}{m.Name, m.Value.Kind, m.Value.Unit(), v})
}

// marshalPlain is json.Marshal without HTML escaping: names such as
// gemm<float> read as written. A writer that needs HTML safety (the HTML
// report) escapes again when it encodes with its own Encoder.
func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (m *Measure) UnmarshalJSON(b []byte) error {
	var raw struct {
		Name  string          `json:"name"`
		Kind  Kind            `json:"kind"`
		Unit  string          `json:"unit"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	m.Name = raw.Name
	if err := m.Value.UnmarshalJSON(raw.Value); err != nil {
		return fmt.Errorf("measure %q: %w", raw.Name, err)
	}
	m.Value.Kind = raw.Kind
	if raw.Kind == KindRate {
		m.Value.RateUnit = raw.Unit
	}
	return nil
}

// Evidence is one piece of proof: a line of text, a small table, or both,
// and the full names of the kernels it refers to (so a UI can link them).
type Evidence struct {
	Text    string   `json:"text,omitempty"`
	Table   *Table   `json:"table,omitempty"`
	Kernels []string `json:"kernels,omitempty"`
	// place and rowPlaces are where on the trace's timeline the evidence
	// points (Place, RowPlace); not part of the JSON.
	place     *Place
	rowPlaces []Place
}

// Table is a small table of evidence whose columns have kinds: a face
// aligns and formats a cell by its column's kind, and JSON carries the
// numbers.
type Table struct {
	Columns []Column  `json:"columns"`
	Rows    [][]Value `json:"rows"`
}

// Column is one column of an evidence table.
type Column struct {
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// Unit is the unit of the column's numbers (see Kind), for JSON
	// readers.
	Unit string `json:"unit,omitempty"`
}

// NewTable returns a table with the given columns, each written as
// name and kind; a rate column takes its unit from its first row.
func NewTable(cols ...Column) *Table {
	for i := range cols {
		if cols[i].Unit == "" {
			cols[i].Unit = Value{Kind: cols[i].Kind}.Unit()
		}
	}
	return &Table{Columns: cols, Rows: [][]Value{}}
}

// Col is a Column of kind k.
func Col(name string, k Kind) Column { return Column{Name: name, Kind: k} }

// Add appends a row. Run checks that every row has one cell per column
// (a ragged row is a bug in the analyzer and fails the run).
func (t *Table) Add(cells ...Value) {
	t.Rows = append(t.Rows, cells)
}

// UnmarshalJSON reads a table and gives every cell its column's kind.
func (t *Table) UnmarshalJSON(b []byte) error {
	type plain Table
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	for _, row := range p.Rows {
		for i := range row {
			if i < len(p.Columns) {
				row[i].Kind = p.Columns[i].Kind
				if p.Columns[i].Kind == KindRate {
					row[i].RateUnit = p.Columns[i].Unit
				}
			}
		}
	}
	*t = Table(p)
	return nil
}

// Kind says what a number is, and so its unit and how it is printed.
type Kind string

// The kinds of a Value.
const (
	// KindDuration is nanoseconds.
	KindDuration Kind = "duration"
	// KindCount is a number of things, possibly a median or per-step
	// average (1.5 launches per step).
	KindCount Kind = "count"
	// KindBytes is bytes.
	KindBytes Kind = "bytes"
	// KindRate is a quantity per second or a ratio; its unit is stated
	// ("B/s", "FLOP/s", "×").
	KindRate Kind = "rate"
	// KindPercent is a fraction in [0, 1], printed as a percentage.
	KindPercent Kind = "percent"
	// KindName is a name: a kernel, an op, a range, a category.
	KindName Kind = "name"
	// KindSource is a source location: "train.py(42): forward".
	KindSource Kind = "source"
)

// Value is one typed cell or measure: a number of a kind, or a name or
// source location. The zero Value is an empty cell (JSON null).
type Value struct {
	Kind Kind
	// Num is the number for numeric kinds.
	Num float64
	// Text is the string for KindName and KindSource.
	Text string
	// RateUnit is the unit of a KindRate.
	RateUnit string
}

// Dur is a duration value.
func Dur(d trace.Duration) Value { return Value{Kind: KindDuration, Num: float64(d)} }

// DurUs is a duration value from microseconds.
func DurUs(us float64) Value { return Value{Kind: KindDuration, Num: math.Round(us * 1e3)} }

// Count is a count (or a median or mean of counts).
func Count(n float64) Value { return Value{Kind: KindCount, Num: n} }

// Bytes is a byte count.
func Bytes(b float64) Value { return Value{Kind: KindBytes, Num: b} }

// Rate is a rate or ratio in unit ("B/s", "FLOP/s", "×").
func Rate(v float64, unit string) Value { return Value{Kind: KindRate, Num: v, RateUnit: unit} }

// Percent is a fraction in [0, 1].
func Percent(f float64) Value { return Value{Kind: KindPercent, Num: f} }

// NameCell is a name; an empty name is an empty cell.
func NameCell(s string) Value {
	if s == "" {
		return Value{}
	}
	return Value{Kind: KindName, Text: s}
}

// SourceCell is a source location; an empty one is an empty cell.
func SourceCell(s string) Value {
	if s == "" {
		return Value{}
	}
	return Value{Kind: KindSource, Text: s}
}

// Numeric reports whether v holds a number (faces right-align those).
func (k Kind) Numeric() bool {
	switch k {
	case KindDuration, KindCount, KindBytes, KindRate, KindPercent:
		return true
	}
	return false
}

// Unit is the unit of v's number in JSON ("ns", "B", "fraction", the
// rate's unit), or "" for counts, names and empty cells.
func (v Value) Unit() string {
	switch v.Kind {
	case KindDuration:
		return "ns"
	case KindBytes:
		return "B"
	case KindPercent:
		return "fraction"
	case KindRate:
		return v.RateUnit
	}
	return ""
}

// Empty reports whether v is an empty cell.
func (v Value) Empty() bool { return v.Kind == "" }

// String formats v the one way every face prints it: durations as
// trace.Duration does, percentages with one decimal, bytes in binary
// units, counts as integers or with one decimal, "" for an empty cell.
func (v Value) String() string {
	if v.Kind.Numeric() && (math.IsNaN(v.Num) || math.IsInf(v.Num, 0)) {
		return "–"
	}
	switch v.Kind {
	case KindDuration:
		return trace.Duration(math.Round(v.Num)).String()
	case KindCount:
		return FormatCount(v.Num)
	case KindBytes:
		return FormatBytes(v.Num)
	case KindPercent:
		return FormatShare(v.Num)
	case KindRate:
		return FormatRate(v.Num, v.RateUnit)
	case KindName, KindSource:
		return v.Text
	}
	return ""
}

// MarshalJSON writes a number for numeric kinds (null when not finite), a
// string for names and source locations, and null for an empty cell.
func (v Value) MarshalJSON() ([]byte, error) {
	switch {
	case v.Kind == KindName || v.Kind == KindSource:
		return marshalPlain(v.Text)
	case v.Kind.Numeric() && !math.IsNaN(v.Num) && !math.IsInf(v.Num, 0):
		return json.Marshal(v.Num)
	}
	return []byte("null"), nil
}

// UnmarshalJSON reads a number, a string or null; the kind comes from the
// enclosing column or measure.
func (v *Value) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*v = Value{}
		return nil
	case len(b) > 0 && b[0] == '"':
		return json.Unmarshal(b, &v.Text)
	}
	return json.Unmarshal(b, &v.Num)
}

// FormatShare formats a fraction as a percentage with one decimal.
func FormatShare(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", f*100)
}

// FormatCount formats a count that may be a median (12.5 launches).
func FormatCount(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// FormatBytes formats a byte count with a binary unit.
func FormatBytes(b float64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", b/(1<<10))
	}
	return fmt.Sprintf("%.0f B", b)
}

// FormatRate formats a rate with SI prefixes (1.2 TFLOP/s, 850 GB/s) or a
// ratio ("3.2×", "40×").
func FormatRate(v float64, unit string) string {
	if unit == "×" {
		if math.Abs(v) >= 10 {
			return fmt.Sprintf("%.0f×", v)
		}
		return fmt.Sprintf("%.1f×", v)
	}
	for _, p := range []struct {
		scale  float64
		prefix string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if math.Abs(v) >= p.scale {
			return fmt.Sprintf("%.3g %s%s", v/p.scale, p.prefix, unit)
		}
	}
	return fmt.Sprintf("%.3g %s", v, unit)
}

// FormatUs formats microseconds (the unit of Result's *Us fields) as a
// duration, the way Value.String prints a KindDuration.
func FormatUs(v float64) string { return DurUs(v).String() }

// Headline is the figures every face leads with, formatted the one way
// they are printed everywhere: the steady-state step, GPU busy as a share
// of it, and kernels per step (StepStats' Steady* medians).
type Headline struct {
	// Step is the median step time; StepNote says which steps it is over
	// ("median after the first", "the only step", "whole trace: no step
	// markers").
	Step, StepNote string
	GPUBusy        string
	KernelsPerStep string
}

// Headline returns r's headline figures.
func (r *Result) Headline() Headline {
	ss := r.StepStats
	h := Headline{Step: FormatUs(ss.SteadyWallUs), StepNote: "median after the first",
		GPUBusy: FormatShare(ss.SteadyGPUBusyShare), KernelsPerStep: FormatCount(ss.SteadyKernels)}
	if wait := LedgerUs(ss.SteadyLedger, LinePeerWait); wait > 0 && ss.SteadyWallUs > 0 {
		// A rank of a run: its collectives spinning for a later rank are
		// waiting, not GPU work.
		h.GPUBusy = FormatShare(max(ss.SteadyGPUBusyShare-wait/ss.SteadyWallUs, 0)) + " (+" + FormatShare(wait/ss.SteadyWallUs) + " waiting for a peer rank)"
	}
	switch {
	case r.Summary.StepsSynthetic:
		h.StepNote = "whole trace: no step markers"
	case ss.SteadySteps == 1 && ss.Count == 1 && r.Summary.FirstStepIsFirstExecution:
		// Nothing ran before it: the only step is also the first
		// execution, with whatever warm-up that carries.
		h.StepNote = "the only step, the program's first iteration: may include warm-up"
	case ss.Count == 1 && r.Summary.ProfiledFrom > 0:
		h.StepNote = fmt.Sprintf("the only step, after %d unprofiled", r.Summary.ProfiledFrom)
	case ss.Count == 1:
		h.StepNote = "the only step"
	case ss.SteadySteps == 1:
		h.StepNote = "the step after the first"
	}
	return h
}

// String is the headline as one line: "step 1.98ms (median after the
// first), GPU busy 6.8%, 35 kernels per step".
func (h Headline) String() string {
	return fmt.Sprintf("step %s (%s), GPU busy %s, %s kernels per step", h.Step, h.StepNote, h.GPUBusy, h.KernelsPerStep)
}

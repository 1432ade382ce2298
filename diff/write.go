package diff

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/tracelens/tracelens/jsonout"
	"github.com/tracelens/tracelens/termtext"
)

// WriteMarkdown writes the comparison for a pull-request comment: the
// summary line first, then benchstat-like tables, findings and notes.
func WriteMarkdown(w io.Writer, r *Result) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "**%s**\n\n", r.SummaryLine())
	fmt.Fprintf(bw, "base `%s` (%s) → new `%s` (%s); Mann–Whitney U test at α=%g, `~` = no significant difference.\n",
		mdEscape(r.Base.Source), describeSide(r.Base), mdEscape(r.New.Source), describeSide(r.New), r.Alpha)
	for _, t := range r.tables(true) {
		fmt.Fprintf(bw, "\n#### %s\n\n", t.title)
		fmt.Fprintf(bw, "| %s |\n|", strings.Join(t.header, " | "))
		for _, right := range t.right {
			if right {
				bw.WriteString("--:|")
			} else {
				bw.WriteString(":--|")
			}
		}
		bw.WriteString("\n")
		for _, row := range t.rows {
			cells := make([]string, len(row))
			for i, c := range row {
				cells[i] = mdEscape(c)
			}
			if t.code {
				// In a GFM code span < and > are literal; only the pipe
				// needs escaping, since tables split cells first.
				cells[0] = "`" + strings.NewReplacer("`", "'", "|", `\|`).Replace(clean(row[0])) + "`"
			}
			fmt.Fprintf(bw, "| %s |\n", strings.Join(cells, " | "))
		}
		if t.more != "" {
			fmt.Fprintf(bw, "\n%s\n", t.more)
		}
		if len(t.notes) > 0 {
			fmt.Fprintf(bw, "\n%s\n", strings.Join(t.notes, "<br>\n"))
		}
	}
	mdItem := func(s string) string { return "- " + mdEscape(s) }
	writeSection(bw, "\n#### Findings\n\n", findingLines(r, func(id string) string { return "`" + id + "`" }), mdItem)
	writeSection(bw, "\n#### Notes\n\n", r.Notes, mdItem)
	return bw.Flush()
}

// writeSection writes a heading and one line per item, or nothing when
// there are no items.
func writeSection(w *bufio.Writer, heading string, items []string, line func(string) string) {
	if len(items) == 0 {
		return
	}
	w.WriteString(heading)
	for _, it := range items {
		w.WriteString(line(it) + "\n")
	}
}

// mdEscape keeps a cell from breaking the table or turning into markup.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;").Replace(clean(s))
}

// TextNameWidth is the width WriteText cuts names to.
const TextNameWidth = 48

// WriteText writes the comparison for a terminal: aligned columns, no
// markup.
func WriteText(w io.Writer, r *Result) error { return WriteTextWidth(w, r, TextNameWidth) }

// WriteTextWidth is WriteText with names cut to nameWidth runes (0: whole
// names). Rows of different kernels never print the same name.
func WriteTextWidth(w io.Writer, r *Result, nameWidth int) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s\n\n", r.SummaryLine())
	fmt.Fprintf(bw, "base  %s (%s)\nnew   %s (%s)\nMann–Whitney U test at α=%g; ~ = no significant difference\n",
		clean(r.Base.Source), clean(describeSide(r.Base)), clean(r.New.Source), clean(describeSide(r.New)), r.Alpha)
	for _, t := range r.tables(false) {
		fmt.Fprintf(bw, "\n%s\n", t.title)
		widths := make([]int, len(t.header))
		for i, h := range t.header {
			widths[i] = utf8.RuneCountInString(h)
		}
		fitNames(&t, nameWidth)
		for _, row := range t.rows {
			for i, c := range row {
				widths[i] = max(widths[i], utf8.RuneCountInString(c))
			}
		}
		line := func(cells []string) {
			for i, c := range cells {
				pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
				if i > 0 {
					bw.WriteString("  ")
				}
				if t.right[i] {
					bw.WriteString(pad + c)
				} else if i < len(cells)-1 {
					bw.WriteString(c + pad)
				} else {
					bw.WriteString(c)
				}
			}
			bw.WriteString("\n")
		}
		header := make([]string, len(t.header))
		for i, h := range t.header {
			header[i] = strings.ToUpper(h)
		}
		line(header)
		for _, row := range t.rows {
			line(row)
		}
		if t.more != "" {
			fmt.Fprintln(bw, t.more)
		}
		for _, n := range t.notes {
			fmt.Fprintln(bw, n)
		}
	}
	textItem := func(s string) string { return "  " + clean(s) }
	writeSection(bw, "\nFindings\n", findingLines(r, func(id string) string { return id }), textItem)
	writeSection(bw, "\nNotes\n", r.Notes, textItem)
	return bw.Flush()
}

// fitNames cuts the first cells of t's rows to width runes (0: whole,
// t.full where it has them), keeping rows of different things distinct.
func fitNames(t *table, width int) {
	if len(t.full) != len(t.rows) {
		for _, row := range t.rows {
			row[0] = fit(row[0], width)
		}
		return
	}
	labels := make([]string, len(t.rows))
	for i, row := range t.rows {
		labels[i] = row[0]
		if width <= 0 {
			labels[i] = t.full[i]
		}
	}
	for i, s := range termtext.DistinctNames(labels, t.full, width) {
		t.rows[i][0] = clean(s)
	}
}

// fit shortens s to width runes by cutting its middle, where long kernel
// names carry the least (namespace at the front, instance at the end), and
// replaces control characters so a hostile name cannot drive the terminal.
func fit(s string, width int) string {
	r := []rune(clean(s))
	if width <= 0 || len(r) <= width {
		return string(r)
	}
	head := (width - 1) / 2
	return string(r[:head]) + "…" + string(r[len(r)-(width-1-head):])
}

// clean replaces control characters, which a trace may carry in any name,
// so that output never drives a terminal.
func clean(s string) string {
	return strings.Map(func(c rune) rune {
		if c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) {
			return '?'
		}
		return c
	}, s)
}

// The JSON output. The summary, kernels and findings keys are the contract
// from the issue; other keys extend it and never change.
type jsonResult struct {
	Base           jsonSide     `json:"base"`
	New            jsonSide     `json:"new"`
	Alpha          float64      `json:"alpha"`
	Summary        jsonSummary  `json:"summary"`
	Kernels        []jsonRow    `json:"kernels"`
	Categories     []jsonRow    `json:"categories"`
	Ops            []jsonTotal  `json:"ops"`
	Annotations    []jsonTotal  `json:"annotations"`
	Findings       jsonFindings `json:"findings"`
	CrossFramework bool         `json:"cross_framework"`
	Notes          []string     `json:"notes"`
	// ProfilerLimited: the profiler's host work is a large share of a
	// host-bound side's step, so the traced change need not be the
	// untraced program's (Result.ProfilerLimited).
	ProfilerLimited bool   `json:"profiler_limited"`
	SummaryLine     string `json:"summary_line"`
	// StepChange splits the step time's change into ledger lines.
	StepChange jsonStepChange `json:"step_change"`
}

type jsonSide struct {
	Source         string `json:"source"`
	Framework      string `json:"framework"`
	Device         string `json:"device"`
	Steps          int    `json:"steps"`
	Samples        int    `json:"samples"`
	StepsSynthetic bool   `json:"steps_synthetic"`
	PeriodBound    string `json:"period_bound"`
}

type jsonSummary struct {
	// StepTimeUs is the step as the user experiences it (the period);
	// HostPeriodUs and GPUPeriodUs the two periods it is the longer of.
	StepTimeUs jsonMetric `json:"step_time_us"`
	// UntracedStepUs is the step time less the profiler's estimated host
	// work (UntracedStep), when both runs have the estimate.
	UntracedStepUs *jsonMetric `json:"untraced_step_us,omitempty"`
	HostPeriodUs   jsonMetric  `json:"host_period_us"`
	GPUPeriodUs    jsonMetric  `json:"gpu_period_us"`
	StepWallUs     jsonMetric  `json:"step_wall_us"`
	GPUBusyUs      jsonMetric  `json:"gpu_busy_us"`
	GPUIdleUs      jsonMetric  `json:"gpu_idle_us"`
	Launches       jsonMetric  `json:"launches"`
	LaunchAPIUs    jsonMetric  `json:"launch_api_us"`
	CPUOpUs        jsonMetric  `json:"cpu_op_us"`
	// ForwardUs, BackwardUs and OptimizerUs are there when either run is
	// a training trace (phaseMetrics).
	ForwardUs   *jsonMetric `json:"forward_us,omitempty"`
	BackwardUs  *jsonMetric `json:"backward_us,omitempty"`
	OptimizerUs *jsonMetric `json:"optimizer_us,omitempty"`
}

// jsonMetric is the M: medians, change, p-value, significance;
// spreads, sample counts and the note extend it.
type jsonMetric struct {
	Base        float64  `json:"base"`
	New         float64  `json:"new"`
	DeltaPct    *float64 `json:"delta_pct"`
	PValue      float64  `json:"p_value"`
	Significant bool     `json:"significant"`
	BaseSpread  float64  `json:"base_spread"`
	NewSpread   float64  `json:"new_spread"`
	NBase       int      `json:"n_base"`
	NNew        int      `json:"n_new"`
	Note        string   `json:"note,omitempty"`
	// Separated: the sides' samples do not overlap at all.
	// MinDetectablePct: the smallest change of the median (percent) the
	// U test at α could detect with these sample counts and spreads; null
	// when none can (too few samples).
	Separated        bool     `json:"separated"`
	MinDetectablePct *float64 `json:"min_detectable_pct"`
}

type jsonRow struct {
	Name          string   `json:"name"`
	Status        Status   `json:"status"`
	BaseTotalUs   float64  `json:"base_total_us"`
	NewTotalUs    float64  `json:"new_total_us"`
	DeltaPct      *float64 `json:"delta_pct"`
	PValue        float64  `json:"p_value"`
	Significant   bool     `json:"significant"`
	Match         Match    `json:"match"`
	Category      string   `json:"category"`
	BaseCount     int      `json:"base_count"`
	NewCount      int      `json:"new_count"`
	BasePerStepUs float64  `json:"base_per_step_us"`
	NewPerStepUs  float64  `json:"new_per_step_us"`
	BaseNames     []string `json:"base_names,omitempty"`
	NewNames      []string `json:"new_names,omitempty"`
	Note          string   `json:"note,omitempty"`
	// Separated and MinDetectablePct as in jsonMetric.
	Separated        bool     `json:"separated"`
	MinDetectablePct *float64 `json:"min_detectable_pct"`
	// Occurrences: the occurrence-level comparison (Row.Occurrences),
	// when the steps are too few for the per-step test.
	Occurrences *jsonOccurrences `json:"occurrences,omitempty"`
}

// jsonOccurrences is an Occurrences: a labelled effect size, not a test.
type jsonOccurrences struct {
	Method           string   `json:"method"`
	NBase            int      `json:"n_base"`
	NNew             int      `json:"n_new"`
	Ratio            float64  `json:"ratio"`
	Lo               *float64 `json:"lo"`
	Hi               *float64 `json:"hi"`
	Confidence       float64  `json:"confidence"`
	Exact            bool     `json:"exact"`
	ExcludesNoChange bool     `json:"excludes_no_change"`
}

// occurrenceMethod labels jsonOccurrences.
const occurrenceMethod = "hodges-lehmann log-duration ratio, per occurrence (not a test across steps)"

func toJSONOccurrences(o *Occurrences) *jsonOccurrences {
	if o == nil {
		return nil
	}
	j := &jsonOccurrences{Method: occurrenceMethod, NBase: o.NBase, NNew: o.NNew, Ratio: o.Ratio,
		Confidence: o.Confidence, Exact: o.Exact, ExcludesNoChange: o.ExcludesNoChange()}
	if o.Bounded {
		j.Lo, j.Hi = &o.Lo, &o.Hi
	}
	return j
}

type jsonTotal struct {
	Name      string   `json:"name"`
	Kind      string   `json:"kind"`
	BaseUs    float64  `json:"base_per_step_us"`
	NewUs     float64  `json:"new_per_step_us"`
	DeltaPct  *float64 `json:"delta_pct"`
	BaseCalls int      `json:"base_calls"`
	NewCalls  int      `json:"new_calls"`
	// Steps is the U test across the compared steps of the per-step time;
	// Occurrences the occurrence-level comparison of an op's calls when
	// the steps are too few for it.
	Steps       jsonMetric       `json:"steps"`
	Occurrences *jsonOccurrences `json:"occurrences,omitempty"`
}

type jsonFindings struct {
	Resolved   []jsonFinding `json:"resolved"`
	New        []jsonFinding `json:"new"`
	Persisting []jsonFinding `json:"persisting"`
	Unreported []jsonFinding `json:"unreported,omitempty"`
}

type jsonFinding struct {
	ID           string  `json:"id"`
	Subject      string  `json:"subject"`
	Title        string  `json:"title"`
	Severity     string  `json:"severity"`
	BaseSavingUs float64 `json:"base_saving_us"`
	NewSavingUs  float64 `json:"new_saving_us"`
	// BaseUntracedSavingUs is the base prediction for the untraced
	// program, where the finding's model gives one.
	BaseUntracedSavingUs float64 `json:"base_untraced_saving_us,omitempty"`
	// OneOff marks a one-time cost: base_one_off_us and new_one_off_us
	// are its cost, and the savings per step are 0.
	OneOff       bool    `json:"one_off,omitempty"`
	BaseOneOffUs float64 `json:"base_one_off_us,omitempty"`
	NewOneOffUs  float64 `json:"new_one_off_us,omitempty"`
	// LedgerLines, DeliveredUs and DeliveredRatio: the ledger lines the
	// base finding's saving (base_saving_us, the prediction) named, their
	// measured change (base − new, in the steady step) and it over the
	// prediction; measured is false when a side has no ledger.
	LedgerLines    []string `json:"ledger_lines,omitempty"`
	DeliveredUs    float64  `json:"delivered_us"`
	DeliveredRatio float64  `json:"delivered_over_predicted"`
	Measured       bool     `json:"measured"`
	// Reduced: a persisting finding the fix cut to half or less.
	Reduced bool `json:"reduced,omitempty"`
	// SubjectGone: a resolved finding whose op ran in BASE's steps and in
	// none of NEW's.
	SubjectGone bool `json:"subject_gone,omitempty"`
}

// pctPtr turns NaN (no percentage: a change from zero) into JSON null.
func pctPtr(p float64) *float64 {
	if math.IsNaN(p) || math.IsInf(p, 0) {
		return nil
	}
	return &p
}

func toJSONMetric(d Delta) jsonMetric {
	return jsonMetric{Base: d.Base.Median, New: d.New.Median, DeltaPct: pctPtr(d.Pct), PValue: d.P, Significant: d.Significant,
		BaseSpread: d.Base.Spread, NewSpread: d.New.Spread, NBase: len(d.Base.Values), NNew: len(d.New.Values), Note: d.Note,
		Separated: d.Separated(), MinDetectablePct: finitePtr(d.MinDetectablePct)}
}

// finitePtr is v, or nil (JSON null) when v is NaN or infinite: a change
// no sample count here can detect.
func finitePtr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func toJSONRows(rows []Row) []jsonRow {
	out := make([]jsonRow, 0, len(rows))
	for _, k := range rows {
		out = append(out, jsonRow{Name: k.Name, Status: k.Status, BaseTotalUs: k.BaseTotalUs, NewTotalUs: k.NewTotalUs,
			DeltaPct: pctPtr(k.Pct), PValue: k.P, Significant: k.Significant, Match: k.Match, Category: k.Category,
			BaseCount: k.BaseCount, NewCount: k.NewCount, BasePerStepUs: k.Base.Median, NewPerStepUs: k.New.Median,
			BaseNames: k.BaseNames, NewNames: k.NewNames, Note: k.Note,
			Separated: k.Separated(), MinDetectablePct: finitePtr(k.MinDetectablePct), Occurrences: toJSONOccurrences(k.Occurrences)})
	}
	return out
}

func toJSONTotals(rows []TotalRow) []jsonTotal {
	out := make([]jsonTotal, 0, len(rows))
	for _, o := range rows {
		out = append(out, jsonTotal{Name: o.Name, Kind: o.Kind, BaseUs: o.BaseUs, NewUs: o.NewUs, DeltaPct: pctPtr(o.Pct),
			BaseCalls: o.BaseCalls, NewCalls: o.NewCalls, Steps: toJSONMetric(o.Steps), Occurrences: toJSONOccurrences(o.Occurrences)})
	}
	return out
}

func toJSONFindings(fs []FindingChange) []jsonFinding {
	out := make([]jsonFinding, 0, len(fs))
	for _, f := range fs {
		out = append(out, jsonFinding(f))
	}
	return out
}

// WriteJSON writes the comparison as indented JSON: the schema
// (summary metrics, kernels, findings) plus categories, ops, annotations
// and notes.
func WriteJSON(w io.Writer, r *Result) error {
	metric := func(key string) jsonMetric {
		if m := r.Metric(key); m != nil {
			return toJSONMetric(m.Delta)
		}
		return jsonMetric{}
	}
	out := jsonResult{
		Base: jsonSide(r.Base), New: jsonSide(r.New), Alpha: r.Alpha,
		Summary: jsonSummary{StepTimeUs: metric(StepTime), HostPeriodUs: metric(HostPeriod), GPUPeriodUs: metric(GPUPeriod), StepWallUs: metric(StepWall), GPUBusyUs: metric(GPUBusy), GPUIdleUs: metric(GPUIdle),
			Launches: metric(Launches), LaunchAPIUs: metric(LaunchAPI), CPUOpUs: metric(CPUOp),
			UntracedStepUs: jsonPhase(r, UntracedStep),
			ForwardUs:      jsonPhase(r, ForwardKernel), BackwardUs: jsonPhase(r, BackwardKernel), OptimizerUs: jsonPhase(r, OptimizerKernel)},
		Kernels:     toJSONRows(r.Kernels),
		Categories:  toJSONRows(r.Categories),
		Ops:         toJSONTotals(r.Ops),
		Annotations: toJSONTotals(r.Annotations),
		Findings: jsonFindings{Resolved: toJSONFindings(r.Findings.Resolved), New: toJSONFindings(r.Findings.New),
			Persisting: toJSONFindings(r.Findings.Persisting), Unreported: toJSONFindings(r.Findings.Unreported)},
		CrossFramework:  r.CrossFramework,
		Notes:           append([]string{}, r.Notes...),
		ProfilerLimited: r.ProfilerLimited,
		SummaryLine:     r.SummaryLine(),
		StepChange:      toJSONStepChange(r.StepChange),
	}
	return jsonout.Write(w, out)
}

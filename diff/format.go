package diff

import (
	"fmt"
	"math"
	"strings"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/trace"
)

// MaxRows bounds the kernel, category, op and annotation rows the Markdown
// and text outputs show, so a diff fits in a pull-request comment; the JSON
// output has every row.
const MaxRows = 15

// FormatTime prints µs the way the diff tables do: "2.00 ms", "135 µs",
// "812 ns" (three significant digits, a space before the unit).
func FormatTime(us float64) string {
	s := trace.Duration(math.Round(us * 1e3)).String()
	// Duration.String prints "2.00ms"; tables read better with a space.
	for _, unit := range []string{"ns", "µs", "ms", "s"} {
		if num, ok := strings.CutSuffix(s, unit); ok {
			return num + " " + unit
		}
	}
	return s
}

// FormatPct prints a percentage change with a true minus sign, one decimal
// below 10% ("−4.2%", "+0.3%") and none above ("−31%"); "new" for a change
// from zero.
func FormatPct(p float64) string {
	if math.IsNaN(p) {
		return "new"
	}
	sign := "+"
	if p < 0 {
		sign = "−"
	}
	a := math.Abs(p)
	if a >= 10 {
		return fmt.Sprintf("%s%.0f%%", sign, a)
	}
	return fmt.Sprintf("%s%.1f%%", sign, a)
}

func formatValue(v float64, time bool) string {
	if time {
		return FormatTime(v)
	}
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// FormatP prints a p-value as every face does, three decimals: "0.029".
func FormatP(p float64) string { return fmt.Sprintf("%.3f", p) }

// FormatSummary prints one side of a metric as every face does: its median
// and spread ("2.03 ms ± 7%"), the median alone when nothing spreads, "—"
// when the side has no samples.
func FormatSummary(s Summary, time bool) string { return cell(s, time, false) }

// cell is "median ± spread" for one side, "—" when it has nothing.
func cell(s Summary, time bool, missing bool) string {
	if missing || len(s.Values) == 0 {
		return "—"
	}
	if s.Median == 0 || s.Spread == 0 {
		return formatValue(s.Median, time)
	}
	return fmt.Sprintf("%s ± %.0f%%", formatValue(s.Median, time), math.Ceil(s.Spread*100))
}

// footnotes numbers the distinct notes of a table, benchstat style.
type footnotes struct{ notes []string }

var superscripts = []string{"¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"}

func (f *footnotes) mark(note string) string {
	if note == "" {
		return ""
	}
	i := 0
	for i < len(f.notes) && f.notes[i] != note {
		i++
	}
	if i == len(f.notes) {
		f.notes = append(f.notes, note)
	}
	if i < len(superscripts) {
		return " " + superscripts[i]
	}
	return fmt.Sprintf(" [%d]", i+1)
}

func (f *footnotes) lines() []string {
	var out []string
	for i, n := range f.notes {
		m := fmt.Sprintf("[%d]", i+1)
		if i < len(superscripts) {
			m = superscripts[i]
		}
		out = append(out, m+" "+n)
	}
	return out
}

// vsBase is benchstat's last column: the change when significant, "~" when
// it could be noise, with the p-value and sample counts.
func vsBase(d Delta, fn *footnotes, bold bool) string {
	stat := fmt.Sprintf("(p=%s n=%d+%d)", FormatP(d.P), len(d.Base.Values), len(d.New.Values))
	if !d.Significant {
		return "~ " + stat + fn.mark(d.Note)
	}
	p := FormatPct(d.Pct)
	if bold {
		p = "**" + p + "**"
	}
	return p + " " + stat
}

// SummaryLine is the one-line verdict: the step period (StepTime) and
// GPU busy, e.g.
// "step period 2.00 ms → 1.38 ms (−31%, p=0.029) · GPU busy 135 µs → 136 µs (~, p=0.343)".
func (r *Result) SummaryLine() string {
	var parts []string
	for _, key := range []string{StepTime, GPUBusy} {
		m := r.Metric(key)
		if m == nil {
			continue
		}
		verdict := "~"
		if m.Significant {
			verdict = FormatPct(m.Pct)
		} else if m.Note != "" {
			verdict = "~ " + FormatPct(m.Pct) + ", untested"
		}
		parts = append(parts, fmt.Sprintf("%s %s → %s (%s, p=%s)", m.Name,
			formatValue(m.Base.Median, m.Time), formatValue(m.New.Median, m.Time), verdict, FormatP(m.P)))
		if key == StepTime && r.ProfilerLimited {
			est := ""
			if u := r.Metric(UntracedStep); u != nil {
				est = ", untraced est. " + FormatPct(u.Pct)
			}
			parts[len(parts)-1] += " [profiler-limited" + est + ": see notes]"
		}
	}
	return strings.Join(parts, " · ")
}

func describeSide(s Side) string {
	var facts []string
	if s.Framework != "" {
		facts = append(facts, s.Framework)
	}
	if s.Device != "" {
		facts = append(facts, s.Device)
	}
	switch {
	case s.StepsSynthetic:
		facts = append(facts, "no step markers: whole trace")
	case s.Samples == s.Steps:
		facts = append(facts, fmt.Sprintf("%d steps", s.Steps))
	default:
		facts = append(facts, fmt.Sprintf("%d of %d steps", s.Samples, s.Steps))
	}
	if s.PeriodBound != "" && !s.StepsSynthetic {
		facts = append(facts, boundText(s.PeriodBound))
	}
	return strings.Join(facts, ", ")
}

// kernelLabel is a kernel row's readable name.
func kernelLabel(k *Row) string {
	if k.Match == ByNormalized {
		return k.Name + " (≈)"
	}
	return analyze.ShortKernelName(k.Name)
}

// fullKernelLabel is a kernel row's whole name.
func fullKernelLabel(k *Row) string {
	if k.Match == ByNormalized {
		return k.Name + " (≈)"
	}
	return k.Name
}

func statusLabel(k *Row) string {
	s := string(k.Status)
	if k.Match == ByNormalized {
		s += ", renamed"
	}
	return s
}

// table is a header and rows of cells, rendered by both writers.
type table struct {
	title  string
	header []string
	// right marks numeric columns, aligned right.
	right []bool
	rows  [][]string
	more  string
	notes []string
	// code marks tables whose first column holds identifiers (kernel, op
	// names), set in code font in Markdown.
	code bool
	// full, when set, is each row's whole name: what tells two rows apart
	// when their first cells are cut, and what --wide prints.
	full []string
}

// tables lays the result out once for Markdown and text.
func (r *Result) tables(bold bool) []table {
	var out []table
	fn := &footnotes{}
	sum := table{title: "Per step (median ± max deviation)", header: []string{"metric", "base", "new", "vs base"}, right: []bool{false, true, true, false}}
	for i := range r.Summary {
		m := &r.Summary[i]
		sum.rows = append(sum.rows, []string{m.Name, cell(m.Base, m.Time, false), cell(m.New, m.Time, false), vsBase(m.Delta, fn, bold)})
	}
	sum.notes = fn.lines()
	out = append(out, sum)
	out = append(out, r.stepChangeTables()...)

	rowTable := func(title, first string, rows []Row, label func(*Row) string, withCategory bool) table {
		fn := &footnotes{}
		t := table{title: title, header: []string{first}, right: []bool{false}, code: withCategory}
		if withCategory {
			t.header, t.right = append(t.header, "category"), append(t.right, false)
		}
		t.header = append(t.header, "base", "new", "vs base", "status")
		t.right = append(t.right, true, true, false, false)
		for i := range rows {
			if i == MaxRows {
				t.more = fmt.Sprintf("… %d more (the JSON output has every row)", len(rows)-MaxRows)
				break
			}
			k := &rows[i]
			row := []string{label(k)}
			if withCategory {
				t.full = append(t.full, fullKernelLabel(k))
				row = append(row, k.Category)
			}
			status := statusLabel(k)
			if k.Occurrences != nil {
				status += "; " + occurrenceText(k.Occurrences) + fn.mark(OccurrenceNote)
			}
			row = append(row, cell(k.Base, true, k.Status == Added), cell(k.New, true, k.Status == Removed), vsBase(k.Delta, fn, bold), status)
			t.rows = append(t.rows, row)
		}
		t.notes = fn.lines()
		return t
	}
	kernels := rowTable("Kernels (GPU time per step)", "kernel", r.Kernels, kernelLabel, true)
	cats := rowTable("Kernel categories (GPU time per step)", "category", r.Categories, func(k *Row) string { return k.Name }, false)
	if r.CrossFramework {
		out = append(out, cats, kernels)
	} else {
		out = append(out, kernels, cats)
	}
	totals := func(title, first string, rows []TotalRow) {
		if len(rows) == 0 {
			return
		}
		fn := &footnotes{}
		t := table{title: title, header: []string{first, "base", "new", "change", "calls", "vs base"}, right: []bool{false, true, true, true, true, false}, code: true}
		for i := range rows {
			if i == MaxRows {
				t.more = fmt.Sprintf("… %d more (the JSON output has every row)", len(rows)-MaxRows)
				break
			}
			o := &rows[i]
			name := o.Name
			if o.Kind == analyze.AnnotationModule {
				name += " (module)"
			}
			t.rows = append(t.rows, []string{name, totalCell(o.BaseUs, o.BaseCalls), totalCell(o.NewUs, o.NewCalls), FormatPct(o.Pct), fmt.Sprintf("%d → %d", o.BaseCalls, o.NewCalls), totalVsBase(o, fn, bold)})
		}
		t.notes = fn.lines()
		out = append(out, t)
	}
	if r.Base.Framework != r.New.Framework {
		// Op and annotation names belong to a framework: across two, every
		// row would be added or removed.
		return out
	}
	totals("Ops (CPU time per compared step, child ops included, mean; calls in the compared steps; largest changes first)", "op", r.Ops)
	totals("Annotations (CPU time per compared step, mean; calls in the compared steps; largest changes first)", "annotation", r.Annotations)
	return out
}

// totalVsBase is an op or annotation row's verdict: the per-step test
// as vsBase prints it, or, when the steps are too few and the calls were
// compared one by one, "untested; per occurrence ×…".
func totalVsBase(o *TotalRow, fn *footnotes, bold bool) string {
	if o.Occurrences != nil {
		return "untested; " + occurrenceText(o.Occurrences) + fn.mark(OccurrenceNote)
	}
	return vsBase(o.Steps, fn, bold)
}

func totalCell(us float64, calls int) string {
	if calls == 0 {
		return "—"
	}
	return FormatTime(us)
}

func findingLines(r *Result, code func(string) string) []string {
	var lines []string
	add := func(label string, fs []FindingChange, saving func(FindingChange) string) {
		for _, f := range fs {
			lines = append(lines, fmt.Sprintf("%s %s: %s%s", label, code(f.ID), f.Title, saving(f)))
		}
	}
	// A one-time cost (cold start, compilation) is worth nothing per
	// step: its cost is what compares.
	add("resolved", r.Findings.Resolved, func(f FindingChange) string {
		if f.OneOff {
			return fmt.Sprintf(" (was a one-time cost of %s)", FormatTime(f.BaseOneOffUs))
		}
		return fmt.Sprintf(" (was worth %s per step%s)", FormatTime(f.BaseSavingUs), deliveredText(f))
	})
	add("new", r.Findings.New, func(f FindingChange) string {
		if f.OneOff {
			return fmt.Sprintf(" (%s severity, one-time cost %s)", f.Severity, FormatTime(f.NewOneOffUs))
		}
		return fmt.Sprintf(" (%s severity, worth %s per step)", f.Severity, FormatTime(f.NewSavingUs))
	})
	add("not resolved", r.Findings.Unreported, func(f FindingChange) string {
		if f.OneOff {
			return fmt.Sprintf(" (was a one-time cost of %s; its ledger lines gave back less than half of it, so only its estimate fell under the reporting threshold)", FormatTime(f.BaseOneOffUs))
		}
		return fmt.Sprintf(" (was worth %s per step; its ledger lines gave back less than half of it, so only its estimate fell under the reporting threshold)", FormatTime(f.BaseSavingUs))
	})
	// A persisting finding the fix cut to half or less reads "reduced".
	var persisting, reduced []FindingChange
	for _, f := range r.Findings.Persisting {
		if f.Reduced {
			reduced = append(reduced, f)
		} else {
			persisting = append(persisting, f)
		}
	}
	worth := func(f FindingChange) string {
		if f.OneOff {
			return fmt.Sprintf(" (one-time cost %s → %s)", FormatTime(f.BaseOneOffUs), FormatTime(f.NewOneOffUs))
		}
		return fmt.Sprintf(" (worth %s → %s per step%s)", FormatTime(f.BaseSavingUs), FormatTime(f.NewSavingUs), deliveredText(f))
	}
	add("reduced", reduced, worth)
	add("persisting", persisting, worth)
	return lines
}

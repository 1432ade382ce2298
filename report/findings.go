package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/analyze"
)

// tier groups a finding like the hand-written investigations' "Tier 1/2/3":
// analyze's Finding.Tier, by the finding's severity, so a tier never
// disagrees with the severity printed beside it.
func tier(f analyze.Finding) int { return f.Tier() }

var tierNames = [...]string{1: "Tier 1: high impact", 2: "Tier 2: medium impact", 3: "Tier 3: lower impact"}

func (d *doc) findings(r *analyze.Result) {
	d.heading(2, "Findings")
	if len(r.Findings) == 0 {
		d.para("No finding: the %s that ran (%s) found nothing worth fixing.", plural(len(r.Analyzers), "analyzer"), codeJoin(r.Analyzers))
		return
	}
	d.para("%s, ranked by estimated saving per step and grouped by severity: the analyzers rate a fix high when it saves %.0f%% of the step or more, medium from %.0f%%, "+
		"lower where the saving is uncertain or the fix has a cost. Each saving is an estimate whose model is stated in its evidence.",
		plural(len(r.Findings), "finding"), analyze.SeverityHighShare*100, analyze.SeverityMediumShare*100)
	nums := findingNumbers(r)
	for t := 1; t <= 3; t++ {
		n := 0
		for i, f := range r.Findings {
			if tier(f) != t {
				continue
			}
			if n == 0 {
				d.heading(3, tierNames[t])
			}
			n++
			d.finding(nums[i], f)
		}
	}
	d.combined(r, nums)
}

// findingNumbers returns each finding's number in the report ("1.2": the
// second finding of tier 1), so other sections can point to it.
func findingNumbers(r *analyze.Result) []string {
	nums := make([]string, len(r.Findings))
	for t := 1; t <= 3; t++ {
		n := 0
		for i, f := range r.Findings {
			if tier(f) == t {
				n++
				nums[i] = fmt.Sprintf("%d.%d", t, n)
			}
		}
	}
	return nums
}

// coldStartFinding returns the number of the cold-start finding, "" when
// there is none: the finding then says what the first step costs, and
// the summary and step breakdown point to it rather than repeat it.
func coldStartFinding(r *analyze.Result) string {
	nums := findingNumbers(r)
	for i, f := range r.Findings {
		if f.ID == analyze.ColdStart.Name {
			return nums[i]
		}
	}
	return ""
}

// combined states what fixing every finding saves, counting findings that
// draw on the same time once, and names those that overlap.
func (d *doc) combined(r *analyze.Result, nums []string) {
	if len(r.Findings) < 2 || r.Summary.CombinedSavingUs <= 0 {
		return
	}
	d.heading(3, "All findings together")
	per := "per step"
	if r.Summary.StepsSynthetic {
		per = "over the run"
	}
	d.para("Fixing every finding saves about %s %s (%s of the step): savings that come out of the same time are counted once.",
		us(r.Summary.CombinedSavingUs), per, pct(r.Summary.CombinedSavingShare))
	for _, o := range r.Overlaps {
		ids := make([]string, len(o.Findings))
		for i, n := range o.Findings {
			ids[i] = nums[n]
		}
		d.b.WriteString(fmt.Sprintf("- Findings %s overlap: they all save %s time, %s %s, so together about %s rather than the %s their savings add up to.\n",
			strings.Join(ids, ", "), Text(analyze.SavingFromText(o.SavingFrom)), us(o.AvailableUs), per, us(o.CombinedUs), us(o.SumUs)))
	}
	if len(r.Overlaps) > 0 {
		d.b.WriteString("\n")
	}
}

func (d *doc) finding(num string, f analyze.Finding) {
	d.heading(4, num+" "+upperFirst(Text(f.Title)))
	saving := "not estimated"
	if estimated(f) || f.NoTimeCost() {
		saving = savingText(d.result, f)
	}
	ranks := ""
	if len(f.Ranks) > 0 {
		// A run's finding: the ranks it concerns.
		ranks = " · **Ranks** " + Text(strings.Trim(fmt.Sprint(f.Ranks), "[]"))
	}
	d.para("**Saving** %s · **Severity** %s · **Confidence** %s · **Analyzer** %s%s", saving, Text(f.Severity), Text(f.Confidence), Code(f.ID), ranks)
	if len(f.LedgerLines) > 0 {
		d.para("**Draws on** %s", drawsOn(d.result, f))
	}
	// Evidence keeps the analyzer's order: runs of plain lines become one
	// bullet list, and a line that introduces a table sits right above it.
	inList := false
	for _, e := range f.Evidence {
		hasTable := e.Table != nil && len(e.Table.Columns) > 0
		if e.Text != "" && !hasTable {
			d.b.WriteString("- " + upperFirst(Text(e.Text)) + kernelList(" (kernels: ", e.Kernels, ")") + "\n")
			inList = true
			continue
		}
		if inList {
			d.b.WriteString("\n")
			inList = false
		}
		if e.Text != "" {
			d.para("%s", upperFirst(Text(e.Text)))
		}
		if hasTable {
			cols := make([]column, len(e.Table.Columns))
			for i, c := range e.Table.Columns {
				cols[i] = left(Text(c.Name))
				if c.Kind.Numeric() {
					cols[i] = right(Text(c.Name))
				}
			}
			tb := newTable(cols...)
			for _, row := range e.Table.Rows {
				cells := make([]string, len(cols))
				for i := range cells {
					if i < len(row) {
						cells[i] = Text(evidenceCell(row[i], e.Kernels))
					}
				}
				tb.add(cells...)
			}
			d.table(tb)
		}
		if !hasTable && len(e.Kernels) > 0 {
			d.para("%s", kernelList("Kernels: ", e.Kernels, "."))
		}
	}
	if inList {
		d.b.WriteString("\n")
	}
	if f.Fix != "" {
		d.para("**Fix:** %s", upperFirst(Text(f.Fix)))
	}
}

// kernelList names up to six kernels by their short names between prefix
// and suffix, or returns "" for none.
func kernelList(prefix string, kernels []string, suffix string) string {
	if len(kernels) == 0 {
		return ""
	}
	var ks []string
	for i, k := range kernels {
		if i == 6 {
			ks = append(ks, fmt.Sprintf("and %d more", len(kernels)-6))
			break
		}
		ks = append(ks, Code(shorten(analyze.ShortKernelName(k), 60)))
	}
	return prefix + strings.Join(ks, ", ") + suffix
}

// estimated reports whether the analyzer estimated what f's fix saves:
// step time, GPU time or a one-time cost (a saving of nothing included).
func estimated(f analyze.Finding) bool {
	return f.SavingUs > 0 || f.GPUSavingUs > 0 || f.OneOffUs > 0
}

// savingText states a finding's saving in the trace's terms: per step, or
// over the whole run when the trace marks no steps, or once for a
// one-time cost.
func savingText(r *analyze.Result, f analyze.Finding) string {
	switch {
	case f.NoTimeCost():
		return "no time: the cost is device memory"
	case f.SavingFrom == analyze.FromOneOff:
		return "about " + us(f.OneOffUs) + " once (a one-time cost, paid once per process: no steady-state step gets shorter)"
	case f.SavingUs == 0 && f.GPUSavingUs > 0:
		return "no step time while " + r.StepStats.LimitedBy() + " (" + us(f.GPUSavingUs) + " of GPU time)"
	}
	if r.Summary.StepsSynthetic {
		s := "about " + us(f.SavingUs) + " over the traced run"
		if f.Share > 0 {
			s += " (" + pct(f.Share) + " of it)"
		}
		return s + gpuSavingText(f)
	}
	s := "about " + us(f.SavingUs) + " per step"
	if f.Share > 0 {
		s += " (" + pct(f.Share) + " of the step)"
	}
	return s + gpuSavingText(f) + untracedSavingText(f)
}

// untracedSavingText adds a host-side saving for the program run without
// the profiler (Finding.UntracedSavingUs), where it differs from the
// traced one: the profiler's per-event cost inflates host time.
func untracedSavingText(f analyze.Finding) string {
	if f.UntracedSavingUs > 0 && analyze.FormatUs(f.UntracedSavingUs) != analyze.FormatUs(f.SavingUs) {
		return "; ~" + us(f.UntracedSavingUs) + " untraced (the profiler's own cost taken out)"
	}
	return ""
}

// gpuSavingText adds the GPU time a fix saves where it differs from the
// step time it saves (the host is the bottleneck for part of it).
func gpuSavingText(f analyze.Finding) string {
	if f.GPUSavingUs > 0 && analyze.FormatUs(f.GPUSavingUs) != analyze.FormatUs(f.SavingUs) {
		return "; " + us(f.GPUSavingUs) + " of GPU time"
	}
	return ""
}

// evidenceCell formats a typed cell the one way every face does,
// shortening a kernel's full name the way the kernel tables do and
// bounding any other long name.
func evidenceCell(v analyze.Value, kernels []string) string {
	s := v.String()
	if v.Kind == analyze.KindName && len(s) > 60 && (slices.Contains(kernels, s) || strings.ContainsAny(s, "<(")) {
		s = analyze.ShortKernelName(s)
	}
	return shorten(s, 100)
}

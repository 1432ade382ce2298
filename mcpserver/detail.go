package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tracelens/tracelens/analyze"
)

func (s *server) finding(_ context.Context, _ *mcp.CallToolRequest, in FindingArgs) (*mcp.CallToolResult, FindingDetail, error) {
	rows, err := limitOf("rows", in.Rows, defaultRows, maxRows)
	if err != nil {
		return nil, FindingDetail{}, err
	}
	if in.ID == "" && in.Number == 0 {
		return nil, FindingDetail{}, fmt.Errorf("give the finding's id or number (the findings tool lists both)")
	}
	a, err := s.load(in.Trace)
	if err != nil {
		return nil, FindingDetail{}, err
	}
	n, err := pickFinding(a.r, in.ID, in.Number)
	if err != nil {
		return nil, FindingDetail{}, err
	}
	f := &a.r.Findings[n-1]
	out := FindingDetail{Source: a.r.Source, FindingSummary: summarize(n, f), LedgerLines: f.LedgerLines,
		Measures: []MeasureOut{}, Evidence: []EvidenceOut{}}
	for _, m := range f.Measures {
		out.Measures = append(out.Measures, MeasureOut{Name: m.Name, Text: m.Value.String(), Value: m.Value.Num, Unit: m.Value.Unit()})
	}
	for _, e := range f.Evidence {
		ev, cut := evidenceOf(e, rows)
		out.Evidence = append(out.Evidence, ev)
		out.Truncated = out.Truncated || cut
	}
	for i := range a.r.Findings {
		if i != n-1 && a.r.Findings[i].ID == f.ID {
			out.SameID = append(out.SameID, summarize(i+1, &a.r.Findings[i]))
		}
	}
	return nil, out, nil
}

// pickFinding returns the number (1-based) of the finding id and number
// name: number alone, id alone (the first with it), or both (number must
// have id).
func pickFinding(r *analyze.Result, id string, number int) (int, error) {
	if number < 0 || number > len(r.Findings) {
		return 0, fmt.Errorf("no finding number %d: the trace has %d findings", number, len(r.Findings))
	}
	if id == "" {
		return number, nil
	}
	var ids []string
	for i := range r.Findings {
		f := &r.Findings[i]
		if f.ID == id && (number == 0 || number == i+1) {
			return i + 1, nil
		}
		if !slices.Contains(ids, f.ID) {
			ids = append(ids, f.ID)
		}
	}
	if number > 0 {
		return 0, fmt.Errorf("finding number %d is %s, not %s", number, r.Findings[number-1].ID, id)
	}
	if len(ids) == 0 {
		return 0, fmt.Errorf("no finding %q: the trace has no findings", id)
	}
	return 0, fmt.Errorf("no finding %q in this trace (it has %s)", id, strings.Join(ids, ", "))
}

// evidenceOf is one piece of evidence with at most rows rows of its
// table, and whether rows were left out.
func evidenceOf(e analyze.Evidence, rows int) (EvidenceOut, bool) {
	out := EvidenceOut{Text: e.Text, Kernels: e.Kernels}
	if e.Table == nil {
		return out, false
	}
	for _, c := range e.Table.Columns {
		out.Columns = append(out.Columns, c.Name)
	}
	out.RowsTotal = len(e.Table.Rows)
	out.Rows = [][]string{}
	for _, row := range e.Table.Rows[:min(rows, len(e.Table.Rows))] {
		cells := make([]string, len(row))
		for i, v := range row {
			cells[i] = v.String()
		}
		out.Rows = append(out.Rows, cells)
	}
	return out, len(e.Table.Rows) > rows
}

func (s *server) kernel(_ context.Context, _ *mcp.CallToolRequest, in KernelArgs) (*mcp.CallToolResult, KernelDetail, error) {
	steps, err := limitOf("steps", in.Steps, defaultSteps, maxSteps)
	if err != nil {
		return nil, KernelDetail{}, err
	}
	if in.Name == "" {
		return nil, KernelDetail{}, fmt.Errorf("name is required: a kernel's name as the top tool lists it")
	}
	a, err := s.load(in.Trace)
	if err != nil {
		return nil, KernelDetail{}, err
	}
	k, err := pickKernel(a.r, in.Name)
	if err != nil {
		return nil, KernelDetail{}, err
	}
	out := KernelDetail{Source: a.r.Source, KernelRow: kernelRow(k), CumulativeShare: k.CumulativeShare, Ops: k.Ops, Python: k.Python,
		StepsTotal: len(k.PerStep), Truncated: len(k.PerStep) > steps, OutsideSteps: k.OutsideSteps, PerStep: []StepKernel{}, Findings: []int{}}
	for i, ps := range k.PerStep[:min(steps, len(k.PerStep))] {
		number := i
		if i < len(a.r.Steps) {
			number = a.r.Steps[i].Number
		}
		out.PerStep = append(out.PerStep, StepKernel{Step: number, Count: ps.Count, Us: ps.Us})
	}
	for i := range a.r.Findings {
		for _, e := range a.r.Findings[i].Evidence {
			if slices.Contains(e.Kernels, k.Name) && !slices.Contains(out.Findings, i+1) {
				out.Findings = append(out.Findings, i+1)
			}
		}
	}
	return nil, out, nil
}

// pickKernel finds the kernel name names: its full name, its short name,
// or a part of one name only. More than one match is an error listing
// some of them.
func pickKernel(r *analyze.Result, name string) (*analyze.Kernel, error) {
	for i := range r.Kernels {
		if r.Kernels[i].Name == name {
			return &r.Kernels[i], nil
		}
	}
	var hits []*analyze.Kernel
	for i := range r.Kernels {
		if r.Kernels[i].ShortName == name {
			hits = append(hits, &r.Kernels[i])
		}
	}
	if len(hits) == 0 {
		for i := range r.Kernels {
			if strings.Contains(r.Kernels[i].Name, name) {
				hits = append(hits, &r.Kernels[i])
			}
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		return nil, fmt.Errorf("no kernel named or containing %q in this trace (the top tool lists them)", name)
	}
	// Kernel names run to kilobytes: the error lists short names, and the
	// top tool (with this name as its filter) gives the full ones.
	var names []string
	for _, k := range hits[:min(len(hits), 8)] {
		names = append(names, fmt.Sprintf("%q", k.ShortName))
	}
	more := ""
	if len(hits) > 8 {
		more = fmt.Sprintf(" and %d more", len(hits)-8)
	}
	return nil, fmt.Errorf("%q matches %d kernels: %s%s; give one's full name (the top tool lists them, with filter to narrow)", name, len(hits), strings.Join(names, ", "), more)
}

func (s *server) ledger(_ context.Context, _ *mcp.CallToolRequest, in LedgerArgs) (*mcp.CallToolResult, LedgerResult, error) {
	steps, err := limitOf("steps", in.Steps, defaultSteps, maxSteps)
	if err != nil {
		return nil, LedgerResult{}, err
	}
	a, err := s.load(in.Trace)
	if err != nil {
		return nil, LedgerResult{}, err
	}
	r := a.r
	ss := r.StepStats
	out := LedgerResult{Source: r.Source, SteadySteps: ss.SteadySteps, SteadyStepUs: ss.SteadyWallUs, Steady: ledgerLines(ss.SteadyLedger, ss.SteadyWallUs),
		StepsTotal: len(r.Steps), Truncated: len(r.Steps) > steps, Steps: []StepLedger{}}
	for _, st := range r.Steps[:min(steps, len(r.Steps))] {
		out.Steps = append(out.Steps, StepLedger{Number: st.Number, WallUs: st.WallUs, Lines: ledgerLines(st.Ledger, st.WallUs)})
	}
	return nil, out, nil
}

// ledgerLines are a ledger's lines with their names in words and their
// shares of wall.
func ledgerLines(l []analyze.LedgerEntry, wall float64) []LedgerLine {
	out := make([]LedgerLine, 0, len(l))
	for _, e := range l {
		share := 0.0
		if wall > 0 {
			share = e.Us / wall
		}
		out = append(out, LedgerLine{Line: e.Line, Text: analyze.LedgerLineText(e.Line), Us: e.Us, Share: share})
	}
	return out
}

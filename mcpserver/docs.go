package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tracelens/tracelens/diff"
	"github.com/tracelens/tracelens/report"
)

func (s *server) report(_ context.Context, _ *mcp.CallToolRequest, in ReportArgs) (*mcp.CallToolResult, TextResult, error) {
	most, err := limitOf("max_bytes", in.MaxBytes, defaultBytes, maxBytes)
	if err != nil {
		return nil, TextResult{}, err
	}
	format := in.Format
	switch format {
	case "", "md", "markdown":
		format = "markdown"
	case "json":
	default:
		return nil, TextResult{}, fmt.Errorf("unknown format %q (want markdown or json)", in.Format)
	}
	inputs, err := s.reportInputs(in.Traces)
	if err != nil {
		return nil, TextResult{}, err
	}
	var buf bytes.Buffer
	if format == "json" {
		err = report.JSON(&buf, inputs)
	} else {
		err = report.Markdown(&buf, inputs, report.Options{})
	}
	if err != nil {
		return nil, TextResult{}, fmt.Errorf("writing the report: %w", err)
	}
	return nil, cut(format, buf.String(), most), nil
}

// reportInputs reads the report's traces, or its one run directory.
func (s *server) reportInputs(paths []string) ([]report.Input, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("traces is required: one trace, several, or one run directory")
	}
	if len(paths) > cacheSize+2 {
		return nil, fmt.Errorf("at most %d traces per report, got %d", cacheSize+2, len(paths))
	}
	if len(paths) == 1 {
		if st, err := os.Stat(paths[0]); err == nil && st.IsDir() {
			dir, err := checkRunPath(paths[0])
			if err != nil {
				return nil, err
			}
			if s.opt.LoadRun == nil {
				return nil, fmt.Errorf("this server reads no runs")
			}
			s.mu.Lock()
			ra, err := s.opt.LoadRun(dir)
			s.mu.Unlock()
			if err != nil {
				return nil, err
			}
			return []report.Input{ra.Input}, nil
		}
	}
	var inputs []report.Input
	for _, p := range paths {
		a, err := s.load(p)
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, report.Input{Trace: a.t, Result: a.r})
	}
	return inputs, nil
}

// cut returns doc as a TextResult, its text cut at the last line end
// within most bytes when longer, with a note saying so.
func cut(format, doc string, most int) TextResult {
	out := TextResult{Format: format, Bytes: len(doc), Text: doc}
	if len(doc) <= most {
		return out
	}
	text := doc[:most]
	if i := strings.LastIndexByte(text, '\n'); i > 0 {
		text = text[:i+1]
	}
	out.Text, out.Truncated = text, true
	out.Note = fmt.Sprintf("cut at %d of %d bytes: raise max_bytes (at most %d), or ask the findings, finding, kernel, top and ledger tools for parts", len(text), len(doc), maxBytes)
	if format == "json" {
		out.Note += "; the cut JSON does not parse"
	}
	return out
}

func (s *server) diff(_ context.Context, _ *mcp.CallToolRequest, in DiffArgs) (*mcp.CallToolResult, DiffResult, error) {
	most, err := limitOf("max_bytes", in.MaxBytes, defaultBytes, maxBytes)
	if err != nil {
		return nil, DiffResult{}, err
	}
	if in.Alpha != 0 && !(in.Alpha > 0 && in.Alpha < 1) {
		return nil, DiffResult{}, fmt.Errorf("alpha must be between 0 and 1, got %g", in.Alpha)
	}
	base, err := s.load(in.Base)
	if err != nil {
		return nil, DiffResult{}, fmt.Errorf("base: %w", err)
	}
	next, err := s.load(in.New)
	if err != nil {
		return nil, DiffResult{}, fmt.Errorf("new: %w", err)
	}
	r, err := diff.Compare(base.r, next.r, diff.Options{Alpha: in.Alpha, KeepWarmup: in.KeepWarmup})
	if err != nil {
		return nil, DiffResult{}, fmt.Errorf("comparing: %w", err)
	}
	var buf bytes.Buffer
	if err := diff.WriteMarkdown(&buf, r); err != nil {
		return nil, DiffResult{}, fmt.Errorf("writing the comparison: %w", err)
	}
	out := DiffResult{Base: base.r.Source, New: next.r.Source, Metrics: []DiffMetric{}, Notes: r.Notes,
		FindingsResolved: len(r.Findings.Resolved), FindingsNew: len(r.Findings.New), FindingsPersisting: len(r.Findings.Persisting),
		Document: cut("markdown", buf.String(), most)}
	for _, m := range r.Summary {
		dm := DiffMetric{Key: m.Key, Name: m.Name, BaseMedian: finite(m.Base.Median), NewMedian: finite(m.New.Median), P: finite(m.P),
			Significant: m.Significant, Note: m.Note}
		if finite(m.Pct) == m.Pct {
			pct := m.Pct
			dm.Pct = &pct
		}
		out.Metrics = append(out.Metrics, dm)
	}
	return nil, out, nil
}

// finite is v, or 0 when v is NaN or infinite (which JSON cannot carry).
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// fmtCompute writes a compute capability ("9.0"), or "" when unknown.
func fmtCompute(major, minor int) string {
	if major == 0 && minor == 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d", major, minor)
}

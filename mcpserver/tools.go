package mcpserver

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tracelens/tracelens/analyze"
)

// Bounds of the tools' output: each list takes a limit (0: the default)
// no larger than its maximum, and says when it was cut.
const (
	defaultKernels  = 20
	maxKernels      = 200
	defaultFindings = 10
	maxFindings     = 50
	defaultRows     = 20
	maxRows         = 200
	defaultSteps    = 10
	maxSteps        = 500
	defaultBytes    = 64 << 10
	maxBytes        = 1 << 20
)

// TraceArgs names one trace.
type TraceArgs struct {
	Trace string `json:"trace" jsonschema:"path of the trace file (Kineto/torch.profiler or Perfetto JSON, Nsight Systems .sqlite, .gz too), relative to the server's working directory, or embedded:NAME for a built-in sample"`
}

// TopArgs are the top tool's arguments.
type TopArgs struct {
	TraceArgs
	Limit  int    `json:"limit,omitempty" jsonschema:"how many kernels to list (default 20, at most 200)"`
	Sort   string `json:"sort,omitempty" jsonschema:"order: total (default), count, mean, median, p95, max or name"`
	Filter string `json:"filter,omitempty" jsonschema:"keep only kernels whose full name matches this regular expression (Go RE2 syntax)"`
}

// FindingsArgs are the findings tool's arguments.
type FindingsArgs struct {
	TraceArgs
	Limit int `json:"limit,omitempty" jsonschema:"how many findings to list, best first (default 10, at most 50)"`
}

// FindingArgs name one finding of a trace.
type FindingArgs struct {
	TraceArgs
	ID     string `json:"id,omitempty" jsonschema:"the finding's id (its analyzer, e.g. fusion-candidate) as the findings tool lists it"`
	Number int    `json:"number,omitempty" jsonschema:"the finding's number in the findings tool's list (1 is the first); picks among several with the same id"`
	Rows   int    `json:"rows,omitempty" jsonschema:"how many rows of each evidence table to give (default 20, at most 200)"`
}

// KernelArgs name one kernel of a trace.
type KernelArgs struct {
	TraceArgs
	Name  string `json:"name" jsonschema:"the kernel's full name, its short name, or a part of the name that only one kernel has"`
	Steps int    `json:"steps,omitempty" jsonschema:"how many steps of the per-step figures to give (default 10, at most 500)"`
}

// LedgerArgs are the ledger tool's arguments.
type LedgerArgs struct {
	TraceArgs
	Steps int `json:"steps,omitempty" jsonschema:"how many steps' own ledgers to give after the steady step's (default 10, at most 500)"`
}

// ReportArgs are the report tool's arguments.
type ReportArgs struct {
	Traces   []string `json:"traces" jsonschema:"one trace, several to compare, or one run directory"`
	Format   string   `json:"format,omitempty" jsonschema:"markdown (default) or json (analyze's Result, the report's JSON schema)"`
	MaxBytes int      `json:"max_bytes,omitempty" jsonschema:"cut the document after this many bytes (default 65536, at most 1048576)"`
}

// DiffArgs name the two traces to compare.
type DiffArgs struct {
	Base       string  `json:"base" jsonschema:"the baseline trace file"`
	New        string  `json:"new" jsonschema:"the trace to compare with the baseline"`
	Alpha      float64 `json:"alpha,omitempty" jsonschema:"significance level of the Mann-Whitney U test (default 0.05)"`
	KeepWarmup bool    `json:"keep_warmup,omitempty" jsonschema:"compare the first step too (dropped by default: it carries one-time costs)"`
	MaxBytes   int     `json:"max_bytes,omitempty" jsonschema:"cut the comparison document after this many bytes (default 65536, at most 1048576)"`
}

// RunArgs name a run directory.
type RunArgs struct {
	Run   string `json:"run" jsonschema:"directory holding one trace per rank of a multi-GPU run"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many findings to list, best first (default 10, at most 50)"`
}

// limitOf resolves a limit argument: 0 takes def, and anything outside
// 1..most is an error that says the range.
func limitOf(name string, given, def, most int) (int, error) {
	if given == 0 {
		return def, nil
	}
	if given < 0 || given > most {
		return 0, fmt.Errorf("%s must be between 1 and %d, got %d", name, most, given)
	}
	return given, nil
}

// readOnly marks a tool that only reads files.
func readOnly() *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
}

// register adds every tool to srv.
func (s *server) register(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{Name: "info", Annotations: readOnly(),
		Description: "What a trace holds and its headline: format, device, events, steps, the steady step time, GPU busy share, bottleneck, kernel launches, how many findings."}, s.info)
	mcp.AddTool(srv, &mcp.Tool{Name: "top", Annotations: readOnly(),
		Description: "Rank a trace's kernels by GPU time (or count, mean, median, p95, max, name) with count, total, mean, median, p95, min, max and share; filter by a name regex."}, s.top)
	mcp.AddTool(srv, &mcp.Tool{Name: "findings", Annotations: readOnly(),
		Description: "What to fix first in a trace: the findings ranked by estimated saving per step, each with severity, confidence and a concrete fix. Use finding for one finding's evidence."}, s.findings)
	mcp.AddTool(srv, &mcp.Tool{Name: "finding", Annotations: readOnly(),
		Description: "One finding of a trace in detail, by id or number: its measures, evidence tables, the kernels it names, the ledger lines its saving draws on, and the fix."}, s.finding)
	mcp.AddTool(srv, &mcp.Tool{Name: "kernel", Annotations: readOnly(),
		Description: "One kernel of a trace in detail, by name: timing, category, the ops and Python lines that launched it, its time per step, and the findings that name it."}, s.kernel)
	mcp.AddTool(srv, &mcp.Tool{Name: "ledger", Annotations: readOnly(),
		Description: "The step ledger of a trace: the steady step's wall time split into exclusive lines (GPU compute, communication, copies, host sync, data loading, launch overhead, framework host, idle, ...) and each step's."}, s.ledger)
	mcp.AddTool(srv, &mcp.Tool{Name: "report", Annotations: readOnly(),
		Description: "The investigation report of one trace, several (with a comparison) or a run directory, as Markdown or as the report's JSON, cut at max_bytes."}, s.report)
	mcp.AddTool(srv, &mcp.Tool{Name: "diff", Annotations: readOnly(),
		Description: "Compare two traces step by step with significance tests: the change of step time, GPU busy and idle, launches, and the findings resolved, new and persisting."}, s.diff)
	mcp.AddTool(srv, &mcp.Tool{Name: "run", Annotations: readOnly(),
		Description: "Analyze a multi-GPU run (a directory of one trace per rank): the cross-rank findings (stragglers, exposed communication) ranked with the lowest rank's own."}, s.run)
}

func (s *server) info(_ context.Context, _ *mcp.CallToolRequest, in TraceArgs) (*mcp.CallToolResult, InfoResult, error) {
	a, err := s.load(in.Trace)
	if err != nil {
		return nil, InfoResult{}, err
	}
	return nil, infoOf(a.t, a.r), nil
}

// kernelOrders are top's sort keys: biggest first, names alphabetically.
var kernelOrders = map[string]func(a, b *analyze.Kernel) int{
	"total":  func(a, b *analyze.Kernel) int { return cmp.Compare(b.TotalUs, a.TotalUs) },
	"count":  func(a, b *analyze.Kernel) int { return cmp.Compare(b.Count, a.Count) },
	"mean":   func(a, b *analyze.Kernel) int { return cmp.Compare(b.MeanUs, a.MeanUs) },
	"median": func(a, b *analyze.Kernel) int { return cmp.Compare(b.MedianUs, a.MedianUs) },
	"p95":    func(a, b *analyze.Kernel) int { return cmp.Compare(b.P95Us, a.P95Us) },
	"max":    func(a, b *analyze.Kernel) int { return cmp.Compare(b.MaxUs, a.MaxUs) },
	"name":   func(a, b *analyze.Kernel) int { return strings.Compare(a.Name, b.Name) },
}

func (s *server) top(_ context.Context, _ *mcp.CallToolRequest, in TopArgs) (*mcp.CallToolResult, TopResult, error) {
	limit, err := limitOf("limit", in.Limit, defaultKernels, maxKernels)
	if err != nil {
		return nil, TopResult{}, err
	}
	by := cmp.Or(in.Sort, "total")
	less, ok := kernelOrders[by]
	if !ok {
		return nil, TopResult{}, fmt.Errorf("unknown sort %q (want total, count, mean, median, p95, max or name)", in.Sort)
	}
	var re *regexp.Regexp
	if in.Filter != "" {
		if re, err = regexp.Compile(in.Filter); err != nil {
			return nil, TopResult{}, fmt.Errorf("bad filter: %w", err)
		}
	}
	a, err := s.load(in.Trace)
	if err != nil {
		return nil, TopResult{}, err
	}
	r := a.r
	var rows []*analyze.Kernel
	for i := range r.Kernels {
		if re == nil || re.MatchString(r.Kernels[i].Name) {
			rows = append(rows, &r.Kernels[i])
		}
	}
	slices.SortStableFunc(rows, less)
	out := TopResult{Source: r.Source, Device: r.Device, KernelLaunches: r.Summary.KernelLaunches, DistinctKernels: r.Summary.DistinctKernels,
		GPUKernelUs: r.Summary.GPUKernelUs, Sort: by, Filter: in.Filter, Matched: len(rows), Truncated: len(rows) > limit, Kernels: []KernelRow{}}
	for _, k := range rows[:min(len(rows), limit)] {
		out.Kernels = append(out.Kernels, kernelRow(k))
	}
	return nil, out, nil
}

func (s *server) findings(_ context.Context, _ *mcp.CallToolRequest, in FindingsArgs) (*mcp.CallToolResult, FindingsResult, error) {
	limit, err := limitOf("limit", in.Limit, defaultFindings, maxFindings)
	if err != nil {
		return nil, FindingsResult{}, err
	}
	a, err := s.load(in.Trace)
	if err != nil {
		return nil, FindingsResult{}, err
	}
	return nil, findingsOf(a.r, limit), nil
}

func (s *server) run(_ context.Context, _ *mcp.CallToolRequest, in RunArgs) (*mcp.CallToolResult, RunResult, error) {
	limit, err := limitOf("limit", in.Limit, defaultFindings, maxFindings)
	if err != nil {
		return nil, RunResult{}, err
	}
	dir, err := checkRunPath(in.Run)
	if err != nil {
		return nil, RunResult{}, err
	}
	if s.opt.LoadRun == nil {
		return nil, RunResult{}, fmt.Errorf("this server reads no runs")
	}
	s.mu.Lock()
	ra, err := s.opt.LoadRun(dir)
	s.mu.Unlock()
	if err != nil {
		return nil, RunResult{}, err
	}
	out := RunResult{Run: ra.RunName, Describe: ra.Describe, Rank: ra.Rank, FindingsResult: findingsOf(ra.Result, limit),
		MissingRanks: []int{}, Warnings: []string{}}
	if ra.Run != nil {
		out.WorldSize = ra.Run.WorldSize
		out.MissingRanks = append(out.MissingRanks, ra.Run.Missing...)
		out.Warnings = append(out.Warnings, ra.Run.Warnings...)
	}
	return nil, out, nil
}

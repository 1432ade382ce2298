package mcpserver

import (
	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/trace"
)

// The results below are the tools' JSON: flat, typed and small. Times are
// microseconds in fields ending in _us and shares are fractions (0–1), as
// in `tracelens report --format json`.

// InfoResult is what the info tool says about a trace.
type InfoResult struct {
	Source    string   `json:"source"`
	Format    string   `json:"format"`
	Framework string   `json:"framework"`
	Devices   []Device `json:"devices"`
	Events    int      `json:"events"`
	SpanUs    float64  `json:"span_us"`
	// Headline is the one line every face leads with: the steady step,
	// GPU busy and kernels per step.
	Headline string `json:"headline"`
	// Steps is the number of steps and StepSource where they come from
	// (profiler, range, call, jit, trace).
	Steps          int     `json:"steps"`
	StepSource     string  `json:"step_source"`
	StepLabel      string  `json:"step_label,omitempty"`
	StepsSynthetic bool    `json:"steps_synthetic"`
	SteadyStepUs   float64 `json:"steady_step_us"`
	// Bottleneck is what limits the steady step: host, gpu or
	// communication.
	Bottleneck      string  `json:"bottleneck"`
	GPUBusyShare    float64 `json:"gpu_busy_share"`
	KernelLaunches  int     `json:"kernel_launches"`
	DistinctKernels int     `json:"distinct_kernels"`
	GPUKernelUs     float64 `json:"gpu_kernel_us"`
	Findings        int     `json:"findings"`
	// Warnings say what the reader tolerated; Skipped what it did not
	// model and why.
	Warnings []string `json:"warnings"`
	Skipped  []Skip   `json:"skipped"`
}

// Device is one GPU the trace records.
type Device struct {
	ID        int     `json:"id"`
	Name      string  `json:"name"`
	SMs       int     `json:"sms"`
	Compute   string  `json:"compute_capability"`
	MemoryGiB float64 `json:"memory_gib"`
}

// Skip counts events of one kind the reader did not model.
type Skip struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// TopResult is the kernel table of the top tool.
type TopResult struct {
	Source          string  `json:"source"`
	Device          string  `json:"device"`
	KernelLaunches  int     `json:"kernel_launches"`
	DistinctKernels int     `json:"distinct_kernels"`
	GPUKernelUs     float64 `json:"gpu_kernel_us"`
	Sort            string  `json:"sort"`
	Filter          string  `json:"filter,omitempty"`
	// Matched is the number of kernels the filter kept; Kernels the
	// first limit of them; Truncated is true when there are more.
	Matched   int         `json:"matched"`
	Truncated bool        `json:"truncated"`
	Kernels   []KernelRow `json:"kernels"`
}

// KernelRow is one distinct kernel name's timing.
type KernelRow struct {
	Name      string `json:"name"`
	ShortName string `json:"short_name"`
	Category  string `json:"category"`
	// Autotune marks launches torch.compile's autotuner made.
	Autotune bool    `json:"autotune,omitempty"`
	Count    int     `json:"count"`
	TotalUs  float64 `json:"total_us"`
	MeanUs   float64 `json:"mean_us"`
	MedianUs float64 `json:"median_us"`
	P95Us    float64 `json:"p95_us"`
	MinUs    float64 `json:"min_us"`
	MaxUs    float64 `json:"max_us"`
	// Share is the kernel's share of all kernel time.
	Share float64 `json:"share"`
}

// FindingsResult is the ranked findings of a trace or of a run.
type FindingsResult struct {
	Source   string `json:"source"`
	Headline string `json:"headline"`
	// Total is the number of findings; Findings the first limit of them.
	Total     int              `json:"total"`
	Truncated bool             `json:"truncated"`
	Findings  []FindingSummary `json:"findings"`
	// CombinedSavingUs is what fixing every finding saves per step, the
	// overlaps between findings counted once.
	CombinedSavingUs    float64 `json:"combined_saving_us"`
	CombinedSavingShare float64 `json:"combined_saving_share"`
}

// FindingSummary is one finding without its evidence: the finding tool
// gives that by Number.
type FindingSummary struct {
	// Number is the finding's rank, 1 first (the finding tool's number).
	Number int `json:"number"`
	// ID is the analyzer that found it.
	ID         string `json:"id"`
	Title      string `json:"title"`
	Subject    string `json:"subject"`
	Severity   string `json:"severity"`
	Confidence string `json:"confidence"`
	// SavingUs is the estimated saving per steady step, Share it over the
	// step; OneOffUs a one-time cost's saving (SavingFrom one_off).
	SavingUs    float64 `json:"saving_us"`
	Share       float64 `json:"share"`
	GPUSavingUs float64 `json:"gpu_saving_us"`
	OneOffUs    float64 `json:"one_off_us"`
	SavingFrom  string  `json:"saving_from"`
	Fix         string  `json:"fix"`
	// Ranks are, in a run, the ranks the finding concerns.
	Ranks []int `json:"ranks,omitempty"`
}

// FindingDetail is one finding with its measures and evidence.
type FindingDetail struct {
	Source string `json:"source"`
	FindingSummary
	LedgerLines []string         `json:"ledger_lines"`
	Measures    []MeasureOut     `json:"measures"`
	Evidence    []EvidenceOut    `json:"evidence"`
	Truncated   bool             `json:"truncated"`
	SameID      []FindingSummary `json:"same_id,omitempty"`
}

// MeasureOut is one measured quantity a finding rests on, formatted as
// the CLI prints it and as a number in its unit.
type MeasureOut struct {
	Name  string  `json:"name"`
	Text  string  `json:"text"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"`
}

// EvidenceOut is one piece of a finding's evidence: a sentence, a table
// (cells formatted as the CLI prints them) and the kernels it names.
type EvidenceOut struct {
	Text    string     `json:"text,omitempty"`
	Columns []string   `json:"columns,omitempty"`
	Rows    [][]string `json:"rows,omitempty"`
	// RowsTotal is the number of rows of the table; Rows holds at most
	// the limit's.
	RowsTotal int      `json:"rows_total,omitempty"`
	Kernels   []string `json:"kernels,omitempty"`
}

// KernelDetail is one kernel: its timing, what launched it, per step.
type KernelDetail struct {
	Source string `json:"source"`
	KernelRow
	CumulativeShare float64 `json:"cumulative_share"`
	// Ops are the framework ops and Python the user's source lines that
	// launched it, most launches first.
	Ops    []string `json:"ops"`
	Python []string `json:"python"`
	// PerStep has the kernel's launches and time in each step, the first
	// limit steps; OutsideSteps counts launches in no step.
	PerStep      []StepKernel `json:"per_step"`
	StepsTotal   int          `json:"steps_total"`
	Truncated    bool         `json:"truncated"`
	OutsideSteps int          `json:"outside_steps"`
	// Findings are the numbers of the findings whose evidence names it.
	Findings []int `json:"findings"`
}

// StepKernel is what one kernel took in one step.
type StepKernel struct {
	Step  int     `json:"step"`
	Count int     `json:"count"`
	Us    float64 `json:"us"`
}

// LedgerResult is the step ledger: where the steady step's wall time
// goes, line by line, and each step's ledger.
type LedgerResult struct {
	Source       string       `json:"source"`
	SteadySteps  int          `json:"steady_steps"`
	SteadyStepUs float64      `json:"steady_step_us"`
	Steady       []LedgerLine `json:"steady"`
	StepsTotal   int          `json:"steps_total"`
	Truncated    bool         `json:"truncated"`
	Steps        []StepLedger `json:"steps"`
}

// LedgerLine is one line of a ledger: its key, its name in words, its
// time and share of the step.
type LedgerLine struct {
	Line  string  `json:"line"`
	Text  string  `json:"text"`
	Us    float64 `json:"us"`
	Share float64 `json:"share"`
}

// StepLedger is one step's ledger; its lines add up to WallUs.
type StepLedger struct {
	Number int          `json:"number"`
	WallUs float64      `json:"wall_us"`
	Lines  []LedgerLine `json:"lines"`
}

// TextResult is a document (a report, a diff) as text, cut at MaxBytes.
type TextResult struct {
	Format string `json:"format"`
	// Bytes is the document's whole size; Truncated is true when Text
	// holds only its first max_bytes (cut at a line end).
	Bytes     int    `json:"bytes"`
	Truncated bool   `json:"truncated"`
	Text      string `json:"text"`
	Note      string `json:"note,omitempty"`
}

// DiffResult compares two traces: the headline metrics per step and the
// comparison as a document.
type DiffResult struct {
	Base    string       `json:"base"`
	New     string       `json:"new"`
	Metrics []DiffMetric `json:"metrics"`
	// Resolved, New and Persisting count findings gone, new and kept.
	FindingsResolved   int        `json:"findings_resolved"`
	FindingsNew        int        `json:"findings_new"`
	FindingsPersisting int        `json:"findings_persisting"`
	Notes              []string   `json:"notes"`
	Document           TextResult `json:"document"`
}

// DiffMetric is one per-step metric compared: the medians, the change
// in percent (null when the base is 0) and the U test's p-value.
type DiffMetric struct {
	Key         string   `json:"key"`
	Name        string   `json:"name"`
	BaseMedian  float64  `json:"base_median"`
	NewMedian   float64  `json:"new_median"`
	Pct         *float64 `json:"pct"`
	P           float64  `json:"p"`
	Significant bool     `json:"significant"`
	Note        string   `json:"note,omitempty"`
}

// RunResult is a run's ranked findings: the cross-rank ones with the
// described rank's own.
type RunResult struct {
	Run      string `json:"run"`
	Describe string `json:"describe"`
	// Rank is the rank whose own findings are ranked with the run's.
	Rank         int   `json:"described_rank"`
	WorldSize    int   `json:"world_size"`
	MissingRanks []int `json:"missing_ranks"`
	FindingsResult
	Warnings []string `json:"warnings"`
}

// summarize is a finding's summary, numbered n.
func summarize(n int, f *analyze.Finding) FindingSummary {
	return FindingSummary{Number: n, ID: f.ID, Title: f.Title, Subject: f.Subject, Severity: f.Severity, Confidence: f.Confidence,
		SavingUs: f.SavingUs, Share: f.Share, GPUSavingUs: f.GPUSavingUs, OneOffUs: f.OneOffUs, SavingFrom: f.SavingFrom, Fix: f.Fix, Ranks: f.Ranks}
}

// findingsOf lists r's findings, the first limit of them.
func findingsOf(r *analyze.Result, limit int) FindingsResult {
	out := FindingsResult{Source: r.Source, Headline: r.Headline().String(), Total: len(r.Findings),
		CombinedSavingUs: r.Summary.CombinedSavingUs, CombinedSavingShare: r.Summary.CombinedSavingShare, Findings: []FindingSummary{}}
	for i := range r.Findings {
		if i == limit {
			out.Truncated = true
			break
		}
		out.Findings = append(out.Findings, summarize(i+1, &r.Findings[i]))
	}
	return out
}

// kernelRow is a kernel's timing row.
func kernelRow(k *analyze.Kernel) KernelRow {
	return KernelRow{Name: k.Name, ShortName: k.ShortName, Category: k.Category, Autotune: k.Autotune, Count: k.Count,
		TotalUs: k.TotalUs, MeanUs: k.MeanUs, MedianUs: k.MedianUs, P95Us: k.P95Us, MinUs: k.MinUs, MaxUs: k.MaxUs, Share: k.Share}
}

// infoOf is the info tool's result for a trace and its analysis.
func infoOf(t *trace.Trace, r *analyze.Result) InfoResult {
	out := InfoResult{Source: r.Source, Format: t.Meta.Format, Framework: t.Meta.Framework, Events: t.Events, SpanUs: t.Span().Dur().Micros(),
		Headline: r.Headline().String(), Steps: r.Summary.Steps, StepSource: r.Summary.StepSource, StepLabel: r.Summary.StepLabel,
		StepsSynthetic: r.Summary.StepsSynthetic, SteadyStepUs: r.StepStats.SteadyWallUs, Bottleneck: r.StepStats.Bottleneck,
		GPUBusyShare: r.StepStats.SteadyGPUBusyShare, KernelLaunches: r.Summary.KernelLaunches, DistinctKernels: r.Summary.DistinctKernels,
		GPUKernelUs: r.Summary.GPUKernelUs, Findings: len(r.Findings), Devices: []Device{}, Warnings: t.Warnings, Skipped: []Skip{}}
	for _, d := range t.Meta.Devices {
		out.Devices = append(out.Devices, Device{ID: d.ID, Name: d.Name, SMs: d.NumSMs,
			Compute: fmtCompute(d.ComputeMajor, d.ComputeMinor), MemoryGiB: float64(d.TotalGlobalMem) / (1 << 30)})
	}
	for _, s := range t.Skipped {
		out.Skipped = append(out.Skipped, Skip{Reason: s.Reason, Count: s.Count})
	}
	return out
}

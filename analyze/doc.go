// Package analyze computes metrics over a trace model and runs analyzers
// that turn them into findings, in the manner of
// golang.org/x/tools/go/analysis: each concern is one Analyzer with a Name,
// a Doc and a Run that returns findings with evidence.
//
// Run computes, once, the metrics every analyzer and every consumer
// (report, tui, diff) shares: kernels by name and category with the ops and
// Python lines that launched them, steps (wall, GPU busy as the union of
// kernel, memcpy and memset intervals, idle split into short launch gaps
// and long host waits, launches, launch API time), launch statistics in
// HTA's terms, a key_averages()-like op table, time per record_function
// range and nn.Module, and a roofline of GEMM-like ops against a table of
// device peaks. Analyzers then read those metrics through a Pass; All lists
// them and their Doc states what each detects, its thresholds (named
// constants) and the model behind its estimated saving.
//
// Every metric is O(n log n) in events or better: indexes are built once
// per Run (per-activity category, launching op and frame; merged busy
// intervals per device; per-name kernel facts) and intervals are queried by
// binary search, never by scanning all events per kernel.
package analyze

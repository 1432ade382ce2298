// Package analyze computes metrics over a trace model and runs analyzers
// that turn them into findings, in the manner of
// golang.org/x/tools/go/analysis.
//
// # Facts, metrics, findings
//
// Run first runs the fact analyzers (Facts): each computes, once, one
// thing several others need and returns it as its result — which step
// each launch belongs to (Steps), each GPU activity's one kernel category
// (KernelCategories), the op and Python line behind each launch
// (Attribution), which API calls launch or block (Launches), the merged
// GPU busy intervals and the idle gaps between them (IdleGaps), GEMM
// shapes (Shapes), torch.compile's own work (CompileRegions), the GPU
// work each host interval owns: what the launch calls made inside it put
// on the GPU, by correlation id, whenever it ran (Ownership). Facts only
// analyzers read run after the metrics, when a selected analyzer requires
// them: the compiled/eager comparisons (CompiledComparisons) and the
// hand-written GEMM kernels (CustomGEMMKernels).
//
// From the facts it computes the metrics every analyzer and every face
// (report, tui, diff) shares, in Result: kernels by name and category with
// the ops and Python lines that launched them and their time per step,
// steps (wall, GPU busy as the union of kernel, memcpy and memset
// intervals, idle split into short launch gaps and long host waits,
// launches), the steady state (the steps after the first: StepStats'
// Steady* medians are "the step", "GPU busy" and "per step" everywhere),
// launch statistics in HTA's terms, a key_averages()-like op table, time
// per record_function range and nn.Module, and a roofline of GEMM-like
// ops against a table of device peaks.
//
// Then the finding analyzers (All) run, after Validate has checked their
// graph (unique names, no cycle, Requires holding only facts). Each reads
// the trace, the metrics and the facts in its Requires through its Pass
// (FactOf) — and nothing else: a fact it does not require is absent, and
// no analyzer sees another's findings; what two share is a fact (as
// compiled-comparisons serves compiled-slower and fusion-candidate, which
// run after the metrics because only analyzers read them). Run completes each
// finding (its saving in ns and as a share of the steady-state step,
// capped at the step), ranks them by saving, and estimates what fixing
// them all saves when several draw on the same time (Overlaps,
// Summary.CombinedSavingUs). Findings are typed: measures and evidence
// tables carry values of a Kind (duration, count, bytes, rate, percent,
// name, source location), so faces only format them and JSON carries
// numbers (docs/json-schema.md).
//
// # Adding an analyzer
//
// A new analyzer is one file and its test:
//
//  1. In analyze/NAME.go declare `var MyCheck = &Analyzer{Name: "my-check",
//     Doc: ..., Requires: []*Analyzer{Steps, Attribution}, Run: runMyCheck}`
//     with its thresholds as named constants the Doc states, and the model
//     behind its saving.
//  2. runMyCheck(p *Pass) ([]Finding, error) reads p.Result (metrics),
//     p.Trace and the facts it requires, and returns findings with a Title
//     of at most MaxTitle characters, a Subject, SavingUs per step and the
//     part of the step it comes out of (SavingFrom), Measures, Evidence
//     (text and typed tables built with NewTable and Add) stating the saving
//     model, a Fix, Severity and Confidence.
//  3. Add it to All, in the order findings of equal saving should list.
//  4. In analyze/NAME_test.go build a trace that should fire it and a
//     close but healthy one that should not with trace/tracetest, and
//     assert the finding's figures computed by hand from the built trace
//     (and, where a recorded trace shows the problem, its figure there,
//     computed independently of tracelens). TestFindingsPerFixture and the
//     invariant tests then check it on every fixture.
//
// A new fact is one file too: its Analyzer (with Fact, not Run), its
// result type, and an accessor that reads it through FactOf; analyzers
// that need it list it in Requires.
//
// # Runs
//
// For one rank of a multi-rank run, Config.PeerWait carries the intervals
// its communication kernels spent waiting for the last rank of their
// collective (package distributed matches the collectives): the ledger
// counts them as peer_wait, not GPU work, and no finding draws on them.
// Result.AddRunFindings then makes the rank's Result the run's one
// analysis, its cross-rank findings ranked with the rank's own.
//
// Report goldens do not list analyzer docs, so a new analyzer changes only
// the goldens of traces it fires on, and there only its own section, the
// rank numbers and the lists of all findings (report's
// TestUnrelatedAnalyzerKeepsGoldens) — and, today, the no-finding
// sentence of a trace without findings, which names every analyzer that
// ran (TestSilentAnalyzerKeepsGoldens).
//
// # Cost
//
// Every metric is O(n log n) in events or better: facts are computed once
// per Run and intervals are queried by binary search, never by scanning
// all events per kernel.
package analyze

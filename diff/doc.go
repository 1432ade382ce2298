// Package diff compares two profiling runs the way benchstat compares two
// benchmark runs: every metric is a set of samples (one per step), shown as
// a median ± spread per run, with the change in percent and the p-value of
// a Mann–Whitney U test, and "~" when the difference could be noise.
//
// Compare pairs up what two runs have in common (summary metrics per step,
// kernels by name and then by normalized name, kernel categories, ops,
// annotations and findings) and returns a Result that the writers in this
// package render as Markdown (for pull requests), text (for terminals) or
// JSON (for scripts), and that Result.Gate checks for regressions in CI.
//
// Use CompareTraces with two traces, or Compare with two analyze.Results
// when the analyses already exist (a UI that shows a report first):
// Compare reads only the Results (every per-step figure, kernel category
// and finding is analyze's; the single kernel launches and op calls come
// from the trace behind a Result's View, when it has one), so diff never
// re-derives analysis. A Result is
// plain data: Summary (step wall, GPU busy, GPU idle, launches, launch API
// time, CPU op time), Kernels and Categories (rows with a Status and a
// Delta each), Ops and Annotations (mean CPU time per compared step and its per-step test), Findings
// (resolved, new, persisting) and Notes; SummaryLine, FormatTime and
// FormatPct format them the way the writers do.
//
// The first step of each run is dropped unless Options.KeepWarmup is set,
// and with fewer than four steps a side (at α = 0.05) no difference is
// claimed: the U test cannot reach significance, and Delta.Note says so.
// Kernel and op rows then compare their occurrences instead (a kernel's
// launches, an op's calls): Occurrences, the Hodges–Lehmann ratio of a
// typical occurrence's duration with its distribution-free interval,
// labelled as an effect size, not a test, since occurrences within one
// step are not independent.
// The regression gate then judges the medians against its threshold and
// says that significance could not be tested. Findings match across runs
// on analyzer and subject.
package diff

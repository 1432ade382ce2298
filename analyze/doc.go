// Package analyze computes metrics over a trace model and runs analyzers
// that turn them into findings, in the manner of
// golang.org/x/tools/go/analysis: each concern is one Analyzer with a Name,
// a Doc and a Run that returns findings with evidence.
package analyze

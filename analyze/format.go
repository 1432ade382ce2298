package analyze

import (
	"github.com/tracelens/tracelens/trace"
)

// Formatting for findings' text: durations as people read them, lists of
// names, and the language a fix speaks (CUDA C or PyTorch).

// fmtUs formats microseconds as a readable duration.
func fmtUs(v float64) string { return durUs(v).String() }

// firstOr returns the first name in s, or def when s is empty.
func firstOr(s []string, def string) string {
	if len(s) > 0 {
		return s[0]
	}
	return def
}

// cudaC reports whether t comes from a CUDA C program (tracelens capture,
// an nsys export of a native program) rather than a Python framework, so
// fixes speak its language.
func cudaC(t *trace.Trace) bool { return t.Meta.CUDAProgram() }

// containsStr reports whether the list of names s holds v.
func containsStr(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

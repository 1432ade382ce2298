package analyze

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
)

// This file holds what the analyzers' builder tests (NAME_test.go) share:
// running one analyzer over a built trace, and the trains of launches most
// of their traces are made of.

// findingsOf runs a alone (with the facts it requires) over tr.
func findingsOf(t *testing.T, tr *trace.Trace, a *Analyzer) []Finding {
	t.Helper()
	r, err := runAnalyzers(tr, []*Analyzer{a})
	if err != nil {
		t.Fatalf("%s: %v", a.Name, err)
	}
	return r.Findings
}

// oneFinding runs a over tr and returns its only finding, failing the test
// when it reports none or several.
func oneFinding(t *testing.T, tr *trace.Trace, a *Analyzer) *Finding {
	t.Helper()
	fs := findingsOf(t, tr, a)
	if len(fs) != 1 {
		t.Fatalf("%s: %d findings, want 1: %+v", a.Name, len(fs), fs)
	}
	return &fs[0]
}

// noFinding fails the test when a reports anything over tr.
func noFinding(t *testing.T, tr *trace.Trace, a *Analyzer) {
	t.Helper()
	if fs := findingsOf(t, tr, a); len(fs) != 0 {
		t.Errorf("%s fired on a healthy trace: %q", a.Name, fs[0].Title)
	}
}

// measureOf returns the number of f's measure called name (durations in
// µs), failing the test when f has none.
func measureOf(t *testing.T, f *Finding, name string) float64 {
	t.Helper()
	for _, m := range f.Measures {
		if m.Name == name {
			if m.Value.Kind == KindDuration {
				return m.Value.Num / 1e3
			}
			return m.Value.Num
		}
	}
	t.Fatalf("%s: no measure %q in %+v", f.ID, name, f.Measures)
	return 0
}

// checkNear fails the test when got is not want (near: within 0.1%).
func checkNear(t *testing.T, what string, got, want float64) {
	t.Helper()
	if !near(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// train adds n launches (cudaLaunchKernel) of the kernel name from at,
// one every period µs, each call taking call µs and its kernel running
// run µs right after the call returns. It returns when the last kernel
// ends.
func train(b *tt.Builder, name string, at trace.Time, n int, period, call, run float64) trace.Time {
	var end trace.Time
	for i := range n {
		s := at + tt.Us(period*float64(i))
		end = s + tt.Us(call+run)
		b.Launch("cudaLaunchKernel", s, s+tt.Us(call)).Kernel(name, s+tt.Us(call), end)
	}
	return end
}

// kernel is a kernel's name and how long it runs, for gpuBound.
type kernel struct {
	name string
	us   float64
}

// opKernel is a kernel, how long it runs and the op around its launch
// call ("" for none), for gpuBoundOps.
type opKernel struct {
	op, name string
	us       float64
}

// gpuBound adds a GPU-bound stretch from at: the kernels' launch calls
// (20µs each, back to back), then the kernels back to back from 10µs
// after the last call, while the host waits in cudaDeviceSynchronize
// until the last ends: every kernel is on the critical path. It returns
// when the last kernel ends.
func gpuBound(b *tt.Builder, at trace.Time, ks ...kernel) trace.Time {
	oks := make([]opKernel, len(ks))
	for i, k := range ks {
		oks[i] = opKernel{name: k.name, us: k.us}
	}
	return gpuBoundOps(b, at, oks...)
}

// gpuBoundOps is gpuBound with an op around each launch call (the call's
// own span): kernel i's call runs from at + 20i µs.
func gpuBoundOps(b *tt.Builder, at trace.Time, ks ...opKernel) trace.Time {
	calls := at + tt.Us(20*float64(len(ks)))
	start := calls + tt.Us(10)
	for i, k := range ks {
		c := at + tt.Us(20*float64(i))
		if k.op != "" {
			b.Op(k.op, c, c+tt.Us(20))
		}
		b.Launch("cudaLaunchKernel", c, c+tt.Us(20)).Kernel(k.name, start, start+tt.Us(k.us))
		start += tt.Us(k.us)
	}
	b.API("cudaDeviceSynchronize", calls, start)
	return start
}

// TestEveryAnalyzerHasItsTest: each analyzer in All has NAME_test.go (its
// name without dashes) holding a test on built traces (TestXxxBuilt: a
// trace that fires it with its figures computed by hand, a close but
// healthy one that does not), so a new analyzer comes with its test.
func TestEveryAnalyzerHasItsTest(t *testing.T) {
	for _, a := range All() {
		file := strings.ReplaceAll(a.Name, "-", "") + "_test.go"
		src, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("%s: %v", a.Name, err)
			continue
		}
		if !regexp.MustCompile(`(?m)^func Test\w+Built\(t \*testing\.T\)`).Match(src) {
			t.Errorf("%s: %s has no TestXxxBuilt", a.Name, file)
		}
		if !strings.Contains(string(src), "oneFinding(") || !strings.Contains(string(src), "noFinding(") {
			t.Errorf("%s: %s lacks a positive (oneFinding) or a negative (noFinding) case", a.Name, file)
		}
	}
}

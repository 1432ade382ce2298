package analyze

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// iterationsWant is one trace's entry in iterations.json
// (fixtures/recorded/expect/iterations.py: the loop of its top-level
// ranges, found by brute force over every period).
type iterationsWant struct {
	Label       string    `json:"label"`
	Count       int       `json:"count"`
	Starts      []float64 `json:"starts"`
	Ends        []float64 `json:"ends"`
	FirstWallUs float64   `json:"first_wall_us"`
	MedianRest  float64   `json:"median_rest_wall_us"`
}

// iterations returns iterations.json's entry for a fixture.
func iterations(t *testing.T, name string) iterationsWant {
	t.Helper()
	var all map[string]iterationsWant
	readExpected(t, "iterations.json", &all)
	w, ok := all[name]
	if !ok {
		t.Fatalf("iterations.json has no %s (run fixtures/recorded/expect/iterations.py)", name)
	}
	return w
}

// seqOf builds a sequence of elements, one per letter of names, 10 µs
// apart, each 5 µs long.
func seqOf(names string) []unitElem {
	seq := make([]unitElem, len(names))
	for i, c := range names {
		s := trace.Time(i) * 10_000
		seq[i] = unitElem{key: string(c), span: trace.Span{Name: string(c), Start: s, End: s + 5_000}}
	}
	return seq
}

// bruteLoop is findLoop's definition, tried over every period.
func bruteLoop(seq []unitElem) (loopFit, bool) {
	ids := make([]int, len(seq))
	for i, e := range seq {
		ids[i] = int(e.key[0])
	}
	var best loopFit
	found := false
	for p := 1; p <= len(seq)/2; p++ {
		if f, ok := loopWithPeriod(seq, ids, p); ok && (!found || f.better(best)) {
			best, found = f, true
		}
	}
	return best, found
}

// TestFindLoop: the period of the top-level sequence is the iteration,
// setup before the loop and work after it left out; the candidate periods
// findLoop tries find what trying every period finds.
func TestFindLoop(t *testing.T) {
	for _, tc := range []struct {
		seq                 string
		start, period, reps int
	}{
		{"AAAAB" + "AAAAB" + "AAAAB", 0, 5, 3},
		{"ST" + "AAAAB" + "AAAAB" + "AAAAB" + "E", 2, 5, 3},
		{"XYXYXYXY", 0, 2, 4},
		{"AAA", 0, 1, 3},
		{"SAAAAAAE", 1, 1, 6},
		{"ABCABCABCAB", 0, 3, 3},
		{"WAABBAABBAABB", 1, 4, 3},
		{"EEEEEEEECCCCCCCC", 0, 1, 8},
		{"ABCD", 0, 0, 0},
		{"A", 0, 0, 0},
		{"", 0, 0, 0},
	} {
		seq := seqOf(tc.seq)
		f, ok := findLoop(seq)
		if tc.reps == 0 {
			if ok {
				t.Errorf("%q: loop %+v, want none", tc.seq, f)
			}
			continue
		}
		if !ok || f.start != tc.start || f.period != tc.period || f.reps != tc.reps {
			t.Errorf("%q: loop %+v (found %v), want start %d period %d ×%d", tc.seq, f, ok, tc.start, tc.period, tc.reps)
		}
		if b, _ := bruteLoop(seq); b != f {
			t.Errorf("%q: %+v, every period tried gives %+v", tc.seq, f, b)
		}
	}
}

// TestLoopSpans: an iteration runs to the next one's start, the last to
// its last element's end: steps never overlap.
func TestLoopSpans(t *testing.T) {
	seq := seqOf("S" + "AAB" + "AAB" + "E")
	f, ok := findLoop(seq)
	if !ok {
		t.Fatal("no loop")
	}
	got := loopSpans(seq, f)
	want := []trace.Span{{Start: 10_000, End: 40_000}, {Start: 40_000, End: 65_000}}
	if !slices.Equal(got, want) {
		t.Errorf("spans %v, want %v", got, want)
	}
	if l := loopLabel(seq[f.start:f.start+f.period], func(e unitElem) string { return e.key }); l != "A ×2 + B" {
		t.Errorf("label %q", l)
	}
}

// TestCounterKeys: a trailing call index (k, k+1, … at least minCounted
// times) is one repeated thing; other digits keep names apart.
func TestCounterKeys(t *testing.T) {
	keys := func(names ...string) []string {
		seq := make([]unitElem, len(names))
		for i, n := range names {
			seq[i].key = n
		}
		out, _ := counterKeys(seq)
		var k []string
		for _, e := range out {
			k = append(k, e.key)
		}
		return k
	}
	for _, tc := range []struct{ in, want []string }{
		{[]string{"sim_call_0", "sim_call_1", "sim_call_2"}, []string{"sim_call_*", "sim_call_*", "sim_call_*"}},
		{[]string{"stage1", "stage2"}, []string{"stage1", "stage2"}},
		{[]string{"run_float64", "run_float32", "run_float64"}, []string{"run_float64", "run_float32", "run_float64"}},
		{[]string{"rep0", "rep2", "rep3", "rep4"}, []string{"rep0", "rep2", "rep3", "rep4"}},
	} {
		if got := keys(tc.in...); !slices.Equal(got, tc.want) {
			t.Errorf("%v: %v, want %v", tc.in, got, tc.want)
		}
	}
}

// synthLoop builds a trace without ProfilerStep whose main thread runs
// ranges named by names (one per element, 100 µs apart, 60 µs long), each
// launching one kernel.
func synthLoop(names []string) *trace.Trace {
	tr := &trace.Trace{}
	for i, n := range names {
		s := trace.Time(i) * 100_000
		tr.Annotations = append(tr.Annotations, trace.Annotation{Span: trace.Span{Name: n, Start: s, End: s + 60_000}, Thread: 0})
		tr.APICalls = append(tr.APICalls, trace.APICall{Span: trace.Span{Name: "cudaLaunchKernel", Start: s + 10_000, End: s + 15_000},
			Thread: 0, FirstGPU: trace.Index(i)})
		tr.GPU = append(tr.GPU, trace.GPUActivity{Span: trace.Span{Name: "k", Start: s + 20_000, End: s + 30_000}, Kind: trace.Kernel})
	}
	end := trace.Time(len(names)) * 100_000
	tr.Steps = []trace.Step{{Span: trace.Span{Name: "whole trace", Start: 0, End: end}, Synthetic: true}}
	return tr
}

// TestDeriveStepsOutermostLoop: four "block" ranges and a "loss" per
// iteration are one step of five ranges; digit variants are different
// things; call indexes are one.
func TestDeriveStepsOutermostLoop(t *testing.T) {
	rep := func(unit []string, n int, pre ...string) []string {
		out := slices.Clone(pre)
		for range n {
			out = append(out, unit...)
		}
		return out
	}
	for _, tc := range []struct {
		names  []string
		label  string
		starts []int // element index of each step's start
	}{
		{rep([]string{"block", "block", "block", "block", "loss"}, 3, "setup"), "block ×4 + loss", []int{1, 6, 11}},
		{rep([]string{"run_float64", "run_float32"}, 3), "run_float64 + run_float32", []int{0, 2, 4}},
		{rep([]string{"stage1", "stage2"}, 2), "stage1 + stage2", []int{0, 2}},
		{[]string{"sim_call_0", "sim_call_1", "sim_call_2", "sim_call_3"}, "sim_call_*", []int{0, 1, 2, 3}},
		{[]string{"stage1", "stage2"}, "", nil},
	} {
		c, src, label := deriveSteps(synthLoop(tc.names))
		if tc.starts == nil {
			if src != StepSourceTrace {
				t.Errorf("%v: steps from %s %q, want the whole trace", tc.names, src, label)
			}
			continue
		}
		if src != StepSourceRange || label != tc.label || len(c.Steps) != len(tc.starts) {
			t.Errorf("%v: %s %q ×%d, want %q ×%d", tc.names, src, label, len(c.Steps), tc.label, len(tc.starts))
			continue
		}
		for i, st := range c.Steps {
			if st.Start != trace.Time(tc.starts[i])*100_000 || i > 0 && c.Steps[i-1].End != st.Start {
				t.Errorf("%v: step %d %v, want start at element %d and no gap or overlap", tc.names, i, st.Span, tc.starts[i])
			}
		}
	}
}

// TestStepsNeverOverlap: on every fixture the steps, marked or derived,
// follow one another without overlapping.
func TestStepsNeverOverlap(t *testing.T) {
	for _, name := range fixtureNames(t) {
		c, _, _ := deriveSteps(load(t, name))
		for i := 1; i < len(c.Steps); i++ {
			if c.Steps[i].Start < c.Steps[i-1].End {
				t.Errorf("%s: step %d %v overlaps step %d %v", name, i, c.Steps[i].Span, i-1, c.Steps[i-1].Span)
			}
		}
	}
}

// TestDerivedIterationsOnRecordedTraces: the steps tracelens derives
// from top-level ranges are the iterations iterations.py finds, start to
// start within 1 µs.
func TestDerivedIterationsOnRecordedTraces(t *testing.T) {
	var all map[string]iterationsWant
	readExpected(t, "iterations.json", &all)
	for name, w := range all {
		c, src, label := deriveSteps(load(t, name))
		if src != StepSourceRange || label != w.Label || len(c.Steps) != w.Count {
			t.Errorf("%s: %s %q ×%d, want record_function %q ×%d", name, src, label, len(c.Steps), w.Label, w.Count)
			continue
		}
		for i, st := range c.Steps {
			if math.Abs(micros(st.Start)-w.Starts[i]) > 1 || math.Abs(micros(st.End)-w.Ends[i]) > 1 {
				t.Errorf("%s: step %d [%.3f, %.3f] µs, want [%.3f, %.3f]", name, i, micros(st.Start), micros(st.End), w.Starts[i], w.Ends[i])
			}
		}
		if strings.Contains(w.Label, "*") && !strings.HasSuffix(label, "*") {
			t.Errorf("%s: label %q", name, label)
		}
	}
}

// micros is a trace time in the JSON's µs.
func micros(at trace.Time) float64 { return float64(at) / 1e3 }

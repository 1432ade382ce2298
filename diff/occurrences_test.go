package diff

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
)

// readActive reads a recorded pair's side cut to the profiler schedule's
// first active steps (the later ProfilerStep windows dropped: their events
// lie outside every step, as the script leaves them out).
func readActive(t *testing.T, path string, active int) *trace.Trace {
	t.Helper()
	tr, err := ingest.ReadFile(path, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Steps) > active {
		tr.Steps = tr.Steps[:active]
	}
	return tr
}

// comparePairActive compares a recorded pair cut to active steps a side.
func comparePairActive(t *testing.T, name string, active int) *Result {
	t.Helper()
	b := readActive(t, filepath.Join(pairsDir, name+"_base.json.gz"), active)
	n := readActive(t, filepath.Join(pairsDir, name+"_new.json.gz"), active)
	r, err := CompareTraces(b, n, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// OccurrenceRelTol is how far diff's ratio and bounds may be from the
// script's, relative: both take the same integer-ns durations and the
// same order statistics of the same differences, so they differ only by
// the logarithm's last bits (Go's math.Log and C's log may round
// differently, ~1e-16 relative, which exp turns into as much in the
// ratio); 1e-9 leaves room for that and nothing else. Counts, the exact
// flag and the confidence must agree exactly (to 1e-12, a sum of
// probabilities).
const OccurrenceRelTol = 1e-9

// TestOccurrencesMatchScript: on every recorded pair cut to 3 active
// steps (2 compared a side, too few for the per-step test),
// testdata/occurrences_expect.py computes each kernel's and op's
// Hodges–Lehmann ratio and interval from the trace JSON on its own; diff's
// rows must give the same.
func TestOccurrencesMatchScript(t *testing.T) {
	if testing.Short() {
		t.Skip("reads every recorded pair")
	}
	raw, err := os.ReadFile("testdata/occurrences_expect.json")
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		Active int `json:"active_steps"`
		Pairs  map[string]struct {
			// The script writes jsonOccurrences' fields (no method).
			Kernels map[string]jsonOccurrences `json:"kernels"`
			Ops     map[string]jsonOccurrences `json:"ops"`
		} `json:"pairs"`
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	checked := 0
	worstRel = 0
	for _, name := range slices.Sorted(mapKeys(want.Pairs)) {
		exp := want.Pairs[name]
		r := comparePairActive(t, name, want.Active)
		for k, w := range exp.Kernels {
			row := r.Kernel(k)
			if row == nil || row.Match != ByName {
				t.Errorf("%s: kernel %s: no row of its own", name, k)
				continue
			}
			checkOccurrences(t, name+": kernel "+k, row.Occurrences, w)
			checked++
		}
		for k, w := range exp.Ops {
			i := slices.IndexFunc(r.Ops, func(o TotalRow) bool { return o.Name == k && o.Kind == "op" })
			if i < 0 {
				t.Errorf("%s: op %s: no row", name, k)
				continue
			}
			checkOccurrences(t, name+": op "+k, r.Ops[i].Occurrences, w)
			checked++
		}
	}
	t.Logf("%d rows checked against the script; largest relative difference of a ratio or bound %.2g", checked, worstRel)
	if checked < 500 {
		t.Errorf("%d rows checked, want the script's 700-odd", checked)
	}
}

// worstRel is the largest relative difference checkOccurrences saw.
var worstRel float64

func checkOccurrences(t *testing.T, what string, got *Occurrences, w jsonOccurrences) {
	t.Helper()
	rel := func(a, b float64) bool {
		if b != 0 {
			worstRel = max(worstRel, math.Abs(a-b)/math.Abs(b))
		}
		return math.Abs(a-b) <= OccurrenceRelTol*math.Abs(b)
	}
	var lo, hi float64
	if w.Lo != nil && w.Hi != nil {
		lo, hi = *w.Lo, *w.Hi
	}
	switch {
	case got == nil:
		t.Errorf("%s: no occurrence comparison, want ×%.4g [%.4g, %.4g]", what, w.Ratio, lo, hi)
	case got.NBase != w.NBase || got.NNew != w.NNew || got.Exact != w.Exact || got.Bounded != (w.Lo != nil):
		t.Errorf("%s: n=%d+%d exact=%v bounded=%v, want n=%d+%d exact=%v bounded=%v", what, got.NBase, got.NNew, got.Exact, got.Bounded,
			w.NBase, w.NNew, w.Exact, w.Lo != nil)
	case !rel(got.Ratio, w.Ratio) || !rel(got.Lo, lo) || !rel(got.Hi, hi) || math.Abs(got.Confidence-w.Confidence) > 1e-12:
		t.Errorf("%s: ×%v [%v, %v] at %v, want ×%v [%v, %v] at %v", what, got.Ratio, got.Lo, got.Hi, got.Confidence, w.Ratio, lo, hi, w.Confidence)
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestOccurrencesLabelled: on tf32_mlp cut to 3 active steps, every
// kernel row the per-step test cannot judge says what its occurrences
// show, in text, Markdown and JSON, and a row whose interval excludes no
// change is never just "untested".
func TestOccurrencesLabelled(t *testing.T) {
	r := comparePairActive(t, "tf32_mlp", 3)
	var text, md, js strings.Builder
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, k := range r.Kernels {
		if k.Status == Added || k.Status == Removed || k.Occurrences == nil {
			continue
		}
		seen++
		if k.Testable() {
			t.Errorf("%s: occurrences beside a testable per-step delta", k.Name)
		}
	}
	if seen == 0 {
		t.Fatal("no kernel row compared its occurrences")
	}
	for face, out := range map[string]string{"text": text.String(), "md": md.String(), "json": js.String()} {
		want := "per occurrence ×"
		if face == "json" {
			want = `"excludes_no_change": true`
		}
		if !strings.Contains(out, want) || (face != "json" && !strings.Contains(out, "not a test across steps")) {
			t.Errorf("%s output lacks the labelled occurrence comparison:\n%s", face, out)
		}
	}
}

// TestCompareOccurrencesRatio: new launches twice as long as base ones
// give a ratio of exactly 2; with 5+5 the exact C is 3 (P(U ≤ 2) = 4/252
// < 0.025 ≤ P(U ≤ 3) = 7/252), so the bounds are 2 × the third smallest
// and third largest of the ratios b[j]/b[i] (1/5, 1/4, 1/3 …; … 3, 4, 5):
// [2/3, 6], at the achieved 1 − 2·P(U ≤ 2) = 96.8 %.
// With 2+2 no interval reaches 95 %: the estimate alone, said so.
func TestCompareOccurrencesRatio(t *testing.T) {
	base := []float64{1, 2, 3, 4, 5}
	next := []float64{2, 4, 6, 8, 10}
	o := compareOccurrences(base, next, 0.05)
	rel := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*b }
	if o == nil || !rel(o.Ratio, 2) || !rel(o.Lo, 2.0/3) || !rel(o.Hi, 6) || !o.Exact || !o.Bounded || o.ExcludesNoChange() ||
		!rel(o.Confidence, 1-2*4.0/252) {
		t.Errorf("5+5 doubled: %+v", o)
	}
	o = compareOccurrences(base[:2], next[:2], 0.05)
	if o == nil || o.Bounded || o.ExcludesNoChange() || !strings.Contains(occurrenceText(o), "too few for an interval") {
		t.Errorf("2+2: %+v", o)
	}
	if compareOccurrences(nil, next, 0.05) != nil {
		t.Error("no base occurrences gave a comparison")
	}
	if o := compareOccurrences([]float64{0, 0, 0, 0}, []float64{1, 1, 1, 1}, 0.05); o == nil || math.IsInf(o.Ratio, 0) || !o.ExcludesNoChange() {
		t.Errorf("zero-length base launches: %+v, want a finite ratio (1 ns floor) excluding no change", o)
	}
}

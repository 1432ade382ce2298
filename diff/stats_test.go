package diff

import (
	"math"
	"strings"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestSummarize(t *testing.T) {
	s := Summarize([]float64{4, 1, 3, 2})
	if s.Median != 2.5 || !near(s.Spread, 0.6, 1e-12) || s.Values[0] != 1 {
		t.Errorf("Summarize = %+v, want median 2.5 spread 0.6 sorted", s)
	}
	if s := Summarize([]float64{10, 11, 9}); s.Median != 10 || !near(s.Spread, 0.1, 1e-12) {
		t.Errorf("odd Summarize = %+v", s)
	}
	if s := Summarize(nil); s.Median != 0 || s.Spread != 0 {
		t.Errorf("empty Summarize = %+v", s)
	}
}

func TestCompareSamples(t *testing.T) {
	base := []float64{2.03, 1.95, 2.02, 1.89}
	faster := []float64{1.37, 1.38, 1.31, 1.39}
	d := CompareSamples(base, faster, 0.05)
	if !d.Significant || !near(d.P, 2.0/70, 1e-12) || !near(d.Pct, (1.375/1.985-1)*100, 1e-9) {
		t.Errorf("clear speedup: %+v", d)
	}
	if d := CompareSamples(base, base, 0.05); d.Significant || d.P != 1 || d.Pct != 0 {
		t.Errorf("self comparison: %+v", d)
	}
	// Three samples a side can never reach p < 0.05 (2/20 = 0.1): say so.
	d = CompareSamples(base[:3], faster[:3], 0.05)
	if d.Significant || !strings.Contains(d.Note, "need ≥ 4 samples") {
		t.Errorf("3+3: %+v, want a too-few-samples note", d)
	}
	// 4+3 still cannot: 2/35 > 0.05.
	if d := CompareSamples(base, faster[:3], 0.05); d.Significant || d.Note == "" {
		t.Errorf("4+3: %+v, want not significant with a note", d)
	}
	// A looser α makes 3+3 enough.
	if d := CompareSamples(base[:3], faster[:3], 0.2); !d.Significant {
		t.Errorf("3+3 at α=0.2: %+v, want significant", d)
	}
	d = CompareSamples([]float64{35, 35, 35, 35}, []float64{35, 35, 35, 35}, 0.05)
	if d.Significant || d.Note != "all samples equal" {
		t.Errorf("constant samples: %+v", d)
	}
	if d := CompareSamples([]float64{0, 0, 0, 0}, []float64{1, 2, 3, 4}, 0.05); !math.IsNaN(d.Pct) || !d.Significant {
		t.Errorf("from zero: %+v, want NaN pct and significant", d)
	}
	if d := CompareSamples(nil, []float64{1}, 0.05); d.Significant || d.P != 1 || d.Note == "" {
		t.Errorf("no base samples: %+v", d)
	}
}

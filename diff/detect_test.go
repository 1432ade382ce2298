package diff

import (
	"math"
	"strings"
	"testing"
)

// TestMinDetectablePct: four steps a side at 100, 101, 102, 103 µs. With
// 4+4 samples the U test reaches α=0.05 only when the sides separate
// completely (one inversion gives p = 4/70 = 0.057), so the detectable
// change is where the scaled new samples clear the base ones: relative to
// the median 101.5, growing needs 100·(1+x) > 103, x = 3.0 %; shrinking
// needs 103·(1−x) < 100, x = 2.91 %. The smaller, 2.91 %, is the answer.
// With 2+2 samples no change is detectable (smallest p 0.33), and a
// clear change is still said to be separated.
func TestMinDetectablePct(t *testing.T) {
	d := CompareSamples([]float64{100, 101, 102, 103}, []float64{100, 101, 102, 103}, 0.05)
	if want := (1 - 100.0/103) * 100; math.Abs(d.MinDetectablePct-want) > 1e-6 {
		t.Errorf("min detectable %.6f%%, want %.6f%%", d.MinDetectablePct, want)
	}
	if d.Separated() {
		t.Error("identical samples separated")
	}
	two := CompareSamples([]float64{100, 102}, []float64{60, 61}, 0.05)
	if !math.IsInf(two.MinDetectablePct, 1) || two.Testable() {
		t.Errorf("2+2: min detectable %v, testable %v", two.MinDetectablePct, two.Testable())
	}
	if !two.Separated() || !strings.Contains(two.Note, "do not overlap") {
		t.Errorf("2+2 at −40%%: separated %v, note %q", two.Separated(), two.Note)
	}
	// A wider spread needs a larger change: 90…110 a side.
	wide := CompareSamples([]float64{90, 95, 105, 110}, []float64{90, 95, 105, 110}, 0.05)
	if !(wide.MinDetectablePct > d.MinDetectablePct) {
		t.Errorf("spread ±10%%: min detectable %.2f%%, not above ±1.5%%'s %.2f%%", wide.MinDetectablePct, d.MinDetectablePct)
	}
}

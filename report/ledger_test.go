package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/analyze"
)

// ledgerOf builds a ledger with the given times for the first lines of
// analyze.LedgerLines and zeros for the rest.
func ledgerOf(us ...float64) []analyze.LedgerEntry {
	var out []analyze.LedgerEntry
	for i, line := range analyze.LedgerLines() {
		e := analyze.LedgerEntry{Line: line}
		if i < len(us) {
			e.Us = us[i]
		}
		out = append(out, e)
	}
	return out
}

// manySteps is a result of n steps, each with a ledger adding up to its
// wall, and a steady ledger.
func manySteps(n int) *analyze.Result {
	r := &analyze.Result{}
	for i := range n {
		l := ledgerOf(100, 0, 0, 10, 0, 0, 0, 0, 0, 0, float64(i), 50)
		r.Steps = append(r.Steps, analyze.Step{Number: i + 1, WallUs: 160 + float64(i), Ledger: l})
	}
	r.StepStats.SteadyWallUs = 170
	r.StepStats.SteadyLedger = ledgerOf(100, 0, 0, 10, 0, 0, 0, 0, 0, 0, 10, 50)
	r.Summary.KernelLaunches = 1
	return r
}

// TestStepsLedgerManySteps: with more steps than the step tables list,
// the ledger table and the HTML bars keep the first eight and the last
// three, like the step table, and every row has the header's cells.
func TestStepsLedgerManySteps(t *testing.T) {
	r := manySteps(20)
	d := &doc{html: true, charts: map[string]string{}, result: r}
	d.stepsLedger(r)
	if d.err != nil {
		t.Fatal(d.err)
	}
	md := d.b.String()
	for _, want := range []string{"| Step | Wall | GPU compute | copies | launch overhead | framework / Python host |", "| … 9 more |", "| #8 |", "| #18 |", "| **the\u00a0step** | 170µs |"} {
		if !strings.Contains(md, want) {
			t.Errorf("steps ledger lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "| #9 |") || strings.Contains(md, "| #17 |") {
		t.Errorf("steps ledger lists steps it should leave out:\n%s", md)
	}
	if len(d.charts) != 1 {
		t.Fatalf("%d charts, want the per-step bars", len(d.charts))
	}
	for _, svg := range d.charts {
		if n := strings.Count(svg, `<text class="label"`); n != 11 {
			t.Errorf("%d bars, want 11", n)
		}
		// Step #18 (index 17): launch overhead 17µs of a 177µs wall.
		if want := "<title>#18 launch overhead: 17.0µs, 9.6% of the step</title>"; !strings.Contains(svg, want) {
			t.Errorf("bars lack %q", want)
		}
	}
}

// TestStepLedgerTable: the steady step's table lists its non-zero lines
// with time and share in ledger order and ends with the step; the bar's
// segments span the bar in proportion and the legend names every line
// drawn with its time and share.
func TestStepLedgerTable(t *testing.T) {
	r := manySteps(3)
	d := &doc{html: true, charts: map[string]string{}, result: r}
	d.stepLedger(r)
	md := d.b.String()
	want := "| GPU compute | 100µs | 58.8% |\n| copies | 10.0µs | 5.9% |\n| launch overhead | 10.0µs | 5.9% |\n| framework / Python host | 50.0µs | 29.4% |\n| **the step** | **170µs** | **100.0%** |\n"
	if !strings.Contains(md, want) {
		t.Errorf("steady ledger table:\n%s\nwant\n%s", md, want)
	}
	for _, svg := range d.charts {
		const span = 960 - 90 - 80
		if s := fmt.Sprintf(`class="l-gpu-compute" x="90.00" y="34" width="%.2f"`, 100.0/170*span); !strings.Contains(svg, s) {
			t.Errorf("bar lacks %s:\n%s", s, svg)
		}
		for _, s := range []string{"GPU compute 100µs · 58.8%", "framework / Python host 50.0µs · 29.4%", `class="l-framework-host"`} {
			if !strings.Contains(svg, s) {
				t.Errorf("bar lacks %q", s)
			}
		}
		if strings.Contains(svg, "l-idle") {
			t.Error("bar draws a line with no time")
		}
	}
	if ledgerClass("no_such_line") != "l-idle" {
		t.Error("an unknown line gets a class of its own")
	}
	empty := &analyze.Result{}
	d = &doc{charts: map[string]string{}}
	d.stepLedger(empty)
	d.stepsLedger(empty)
	if d.b.Len() != 0 {
		t.Errorf("a result without steps has a ledger: %q", d.b.String())
	}
}

package tui

import (
	"strings"
	"testing"

	"github.com/tracelens/tracelens/analyze"
)

// TestOverviewLedger: the overview's ledger legend lists the steady
// step's lines with the most time first, each with analyze's time and
// its share of the step, and keeps to the terminal's width however
// narrow (whole items only, an ellipsis for those left out).
func TestOverviewLedger(t *testing.T) {
	m := loaded(t, recordedOptions("train_sync_pageable.json.gz"), 120, 40)
	r := m.data.res
	st := newStyles(plainRenderer())
	for _, w := range []int{200, 120, 80, 40, 20} {
		lines := ledger(r, st, w, 12, 20)
		if len(lines) != 2 {
			t.Fatalf("width %d: %d ledger lines, want the bar and its legend", w, len(lines))
		}
		for _, l := range lines {
			if width(l) > w && w >= 12+20 {
				t.Errorf("width %d: %q is %d cells", w, l, width(l))
			}
		}
		legend := strings.TrimSpace(lines[1])
		if w >= 80 && !strings.HasPrefix(legend, "█ data loading "+analyze.FormatUs(analyze.LedgerUs(r.StepStats.SteadyLedger, analyze.LineDataLoading))+" 50.9% · ▓ framework / Python host") {
			t.Errorf("width %d: legend %q does not lead with the largest lines", w, legend)
		}
		if w == 200 && strings.HasSuffix(legend, "…") == (len(strings.Split(legend, " · ")) == 8) {
			t.Errorf("width %d: legend %q: the ellipsis must mark left-out lines only", w, legend)
		}
	}
	if got := ledger(&analyze.Result{}, st, 80, 12, 20); got != nil {
		t.Errorf("a result without steps has a ledger: %q", got)
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/export"
	"github.com/tracelens/tracelens/fixtures"
	"github.com/tracelens/tracelens/ingest"
)

// ledgerFigure is one steady ledger line as a face prints it: its time and
// its share of the step.
type ledgerFigure struct{ time, share string }

// TestLedgerAgreesAcrossFaces: on traces of different shapes (data
// loading and sync, a sleep between steps, CUDA graphs, the embedded
// sample), the steady step's ledger printed by `report` (Markdown), the
// TUI's overview and `export` (the Parquet file read back) is the
// analysis JSON's, line by line, to the printed precision.
func TestLedgerAgreesAcrossFaces(t *testing.T) {
	cases := []struct{ name, path, file string }{
		{"train_sync_pageable", fixture("recorded/train_sync_pageable.json.gz"), ""},
		{"sleep_mlp", fixture("recorded/sleep_mlp.json.gz"), ""},
		{"cudagraph_gemm_chain", fixture("recorded/cudagraph_gemm_chain.json.gz"), ""},
		// The embedded sample is read from the binary; export reads files,
		// so it gets the same bytes from fixtures/.
		{"embedded", embeddedPrefix + fixtures.Default, fixture(fixtures.Default)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			face := func(args ...string) string {
				var out, errOut bytes.Buffer
				if code := runMain(&env{stdout: &out, stderr: &errOut}, args); code != 0 {
					t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
				}
				return out.String()
			}
			var r analyze.Result
			if err := json.Unmarshal([]byte(face("report", "--format", "json", c.path)), &r); err != nil {
				t.Fatal(err)
			}
			ss := r.StepStats
			want := map[string]ledgerFigure{}
			top, topUs := "", 0.0
			for _, e := range ss.SteadyLedger {
				if e.Us > 0 {
					want[analyze.LedgerLineText(e.Line)] = ledgerFigure{analyze.FormatUs(e.Us), analyze.FormatShare(e.Us / ss.SteadyWallUs)}
					if e.Us > topUs {
						top, topUs = analyze.LedgerLineText(e.Line), e.Us
					}
				}
			}
			if len(want) < 2 {
				t.Fatalf("the steady ledger has %d non-zero lines: nothing to compare", len(want))
			}

			md := markdownLedger(t, face("report", c.path))
			if md["the step"].time != analyze.FormatUs(ss.SteadyWallUs) {
				t.Errorf("report: the step is %q, the JSON's %s", md["the step"].time, analyze.FormatUs(ss.SteadyWallUs))
			}
			delete(md, "the step")
			compareLedger(t, "report", md, want, true)

			path := c.path
			if c.file != "" {
				path = c.file
			}
			tr, err := ingest.ReadFile(path, ingest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			view := tuiLedger(t, tuiScreen(t, tr, path))
			compareLedger(t, "tui", view, want, false)
			if _, ok := view[top]; !ok || len(view) < min(3, len(want)) {
				t.Errorf("tui shows %d ledger lines %v, want at least %d with %q, the largest", len(view), view, min(3, len(want)), top)
			}

			out := t.TempDir()
			face("export", "-o", out, path)
			runs, err := filepath.Glob(filepath.Join(out, export.TableLedger, "*.parquet"))
			if err != nil || len(runs) != 1 {
				t.Fatalf("export wrote %v (%v), want one ledger file", runs, err)
			}
			rows, err := parquet.ReadFile[export.LedgerRow](runs[0])
			if err != nil {
				t.Fatal(err)
			}
			pq := map[string]ledgerFigure{}
			for _, row := range rows {
				if row.Steady && row.TimeNs > 0 {
					pq[row.LineText] = ledgerFigure{analyze.FormatUs(float64(row.TimeNs) / 1e3), analyze.FormatShare(row.Share)}
				}
			}
			compareLedger(t, "export", pq, want, true)
		})
	}
}

// compareLedger checks that a face's lines are the JSON's, to the printed
// precision; all says the face must show every non-zero line.
func compareLedger(t *testing.T, face string, got, want map[string]ledgerFigure, all bool) {
	t.Helper()
	for line, g := range got {
		if w, ok := want[line]; !ok || g != w {
			t.Errorf("%s: %s is %+v, the JSON's %+v", face, line, g, w)
		}
	}
	if all && len(got) != len(want) {
		t.Errorf("%s shows %d ledger lines, the JSON has %d non-zero: %v", face, len(got), len(want), got)
	}
}

// markdownLedger reads the "Where the step's time goes" table of a
// Markdown report: line in words → time and share.
func markdownLedger(t *testing.T, md string) map[string]ledgerFigure {
	t.Helper()
	_, sec, ok := strings.Cut(md, "## Where the step's time goes\n")
	if !ok {
		t.Fatal("report has no \"Where the step's time goes\" section")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	out := map[string]ledgerFigure{}
	for _, l := range strings.Split(sec, "\n") {
		cells := strings.Split(strings.Trim(l, "| "), " | ")
		if len(cells) != 3 || cells[0] == "Line" || strings.HasPrefix(cells[0], "---") {
			continue
		}
		for i := range cells {
			cells[i] = strings.Trim(cells[i], "*")
		}
		out[cells[0]] = ledgerFigure{cells[1], cells[2]}
	}
	return out
}

// tuiLedger reads the legend under the overview's "Step ledger" bar:
// "█ data loading 3.82ms 50.9% · ▓ framework / Python host 2.74ms 36.5% · …".
func tuiLedger(t *testing.T, screen string) map[string]ledgerFigure {
	t.Helper()
	lines := strings.Split(screen, "\n")
	out := map[string]ledgerFigure{}
	for i, l := range lines {
		if !strings.Contains(l, "Step ledger ") || i+1 == len(lines) {
			continue
		}
		for _, item := range strings.Split(strings.TrimSpace(lines[i+1]), " · ") {
			f := strings.Fields(item)
			if len(f) < 4 {
				continue // the ellipsis of lines left out
			}
			out[strings.Join(f[1:len(f)-2], " ")] = ledgerFigure{f[len(f)-2], f[len(f)-1]}
		}
		return out
	}
	t.Fatal("the TUI overview has no step ledger")
	return nil
}

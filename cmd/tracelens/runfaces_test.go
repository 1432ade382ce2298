package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/parquet-go/parquet-go"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/distributed"
	"github.com/tracelens/tracelens/export"
	"github.com/tracelens/tracelens/report"
	"github.com/tracelens/tracelens/tui"
)

// TestRunFacesAgree: for every run in fixtures/runs, `findings DIR` (text
// and JSON), `report DIR` (Markdown: title, executive summary, next steps;
// JSON) and the TUI's first screen lead with the same finding and the same
// saving, as does `export DIR`'s findings table of the described rank:
// the run is one analysis, its cross-rank findings ranked with the
// described rank's own.
func TestRunFacesAgree(t *testing.T) {
	dirs, _ := filepath.Glob(fixture("runs/*"))
	n := 0
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		n++
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			face := func(args ...string) string {
				var out, errOut bytes.Buffer
				if code := runMain(&env{stdout: &out, stderr: &errOut}, args); code != 0 {
					t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
				}
				return out.String()
			}
			var rep struct {
				Run      string `json:"run"`
				Rank     int    `json:"rank"`
				Summary  analyze.Summary
				Findings []distributed.Finding `json:"findings"`
			}
			if err := json.Unmarshal([]byte(face("report", "--format", "json", dir)), &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Run != name {
				t.Errorf("report JSON names the run %q, want %q", rep.Run, name)
			}
			if len(rep.Findings) == 0 {
				t.Fatal("no finding on the run: nothing to compare")
			}
			top := rep.Findings[0]
			saving := analyze.FormatUs(top.SavingUs)
			if rep.Summary.CombinedSavingUs+1e-6 < top.SavingUs {
				t.Errorf("combined saving %.1f µs is below the top finding's %.1f", rep.Summary.CombinedSavingUs, top.SavingUs)
			}

			var fj distributed.Result
			if err := json.Unmarshal([]byte(face("findings", "--format", "json", dir)), &fj); err != nil {
				t.Fatal(err)
			}
			if len(fj.Findings) == 0 || fj.Findings[0].ID != top.ID || fj.Findings[0].Title != top.Title || fj.Findings[0].SavingUs != top.SavingUs {
				t.Errorf("findings JSON leads with %+v, report JSON with %s %q %.3f", fj.Findings[:min(1, len(fj.Findings))], top.ID, top.Title, top.SavingUs)
			}
			if fj.CombinedSavingUs != rep.Summary.CombinedSavingUs {
				t.Errorf("findings JSON combined %.3f, report JSON %.3f", fj.CombinedSavingUs, rep.Summary.CombinedSavingUs)
			}

			text := face("findings", dir)
			if want := "1. [" + top.ID + "] " + top.Title; !strings.Contains(text, want) || !strings.Contains(text, "saves ~"+saving+" per step") {
				t.Errorf("findings text does not lead with %q saving %s:\n%s", want, saving, text)
			}

			md := face("report", dir)
			if !strings.HasPrefix(md, "# Performance report: run `"+name+"`") {
				t.Errorf("report title: %q", strings.SplitN(md, "\n", 2)[0])
			}
			summary := section(md, "## Executive summary")
			first := strings.SplitN(strings.TrimSpace(summary), "\n", 2)[0]
			// The report writes a title as a sentence ("Launch bound: …").
			if !containsTitle(first, top.Title) || !strings.Contains(first, "saves about "+saving) {
				t.Errorf("executive summary leads with %q, want %q saving %s", first, top.Title, saving)
			}
			next := section(md, "## Recommended next steps")
			if !containsTitle(strings.SplitN(strings.TrimSpace(next), "\n", 2)[0], top.Title) {
				t.Errorf("next steps lead with %q, want %q", strings.SplitN(strings.TrimSpace(next), "\n", 2)[0], top.Title)
			}
			if !strings.Contains(md, "Fixing every finding saves about "+analyze.FormatUs(rep.Summary.CombinedSavingUs)) && len(rep.Findings) > 1 {
				t.Errorf("report's combined saving is not the JSON's %s", analyze.FormatUs(rep.Summary.CombinedSavingUs))
			}

			out := t.TempDir()
			face("export", "-o", out, dir)
			// Every rank's findings table ranks the run's findings with
			// the rank's own: the described rank's leads with the top.
			files, _ := filepath.Glob(filepath.Join(out, export.TableFindings, "*rank"+strconv.Itoa(rep.Rank)+"*.parquet"))
			if len(files) != 1 {
				t.Fatalf("export wrote findings %v, want one for rank %d", files, rep.Rank)
			}
			rows, err := parquet.ReadFile[export.FindingRow](files[0])
			if err != nil {
				t.Fatal(err)
			}
			var lead *export.FindingRow
			for i := range rows {
				if rows[i].Position == 0 {
					lead = &rows[i]
				}
			}
			if lead == nil || lead.ID != top.ID || lead.Title != top.Title || analyze.FormatUs(float64(lead.SavingNs)/1e3) != saving {
				t.Errorf("export's findings lead with %+v, want %s %q saving %s", lead, top.ID, top.Title, saving)
			}

			// The Ranks screen lists the run's findings as a table
			// (SEVERITY, RUN FINDINGS, SAVING/STEP, RANKS): its first
			// row is the top finding with its saving.
			view := runTUIScreen(t, dir)
			leadRow := firstLineAfter(view[max(strings.Index(view, "RUN FINDINGS"), 0):])
			t.Logf("top: [%s] %s, saves %s per step; combined %s; TUI: %s", top.ID, top.Title, saving,
				analyze.FormatUs(rep.Summary.CombinedSavingUs), strings.TrimSpace(leadRow))
			if !strings.Contains(view, "RUN FINDINGS") || !strings.Contains(leadRow, " "+saving+" ") || !strings.Contains(leadRow, tuiCut(top.Title)) {
				t.Errorf("the TUI's first screen does not lead with %q saving %s:\n%s", top.Title, saving, view)
			}
			facesShowRankBusy(t, fj.Ranks, text, md, out, view)
		})
	}
	if n == 0 {
		t.Skip("no runs in fixtures/runs")
	}
}

// section returns the Markdown after heading up to the next heading of
// the same level.
func section(md, heading string) string {
	i := strings.Index(md, heading+"\n")
	if i < 0 {
		return ""
	}
	rest := md[i+len(heading)+1:]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// mdTitle is a finding title as the Markdown report escapes and clips it:
// its first 60 characters, underscores escaped.
// containsTitle reports whether line holds title as Markdown writes it,
// its first letter perhaps capitalised.
func containsTitle(line, title string) bool {
	t := mdTitle(title)
	r := []rune(t)
	if len(r) > 0 {
		r[0] = unicode.ToUpper(r[0])
	}
	return strings.Contains(line, t) || strings.Contains(line, string(r))
}

func mdTitle(s string) string {
	r := []rune(s)
	return strings.ReplaceAll(string(r[:min(len(r), 60)]), "_", "\\_")
}

// tuiCut is the start of a title that fits the TUI's line.
func tuiCut(s string) string {
	r := []rune(s)
	return string(r[:min(len(r), 50)])
}

func firstLineAfter(s string) string {
	lines := strings.SplitN(s, "\n", 3)
	if len(lines) < 2 {
		return ""
	}
	return lines[1]
}

// runTUIScreen opens the TUI on run dir as `tracelens tui DIR` does and
// returns its first screen.
func runTUIScreen(t *testing.T, dir string) string {
	t.Helper()
	r := lipgloss.NewRenderer(&bytes.Buffer{})
	r.SetColorProfile(termenv.Ascii)
	opts := tui.Options{Name: dir, Renderer: r}
	runTUIOptions(&opts, []string{dir}, &env{stderr: io.Discard})
	return tuiFirstScreen(t, opts)
}

// tuiFirstScreen runs the TUI model with opts (its Renderer set) until it
// has loaded and analyzed, at 200×80, and returns its first screen.
func tuiFirstScreen(t *testing.T, opts tui.Options) string {
	t.Helper()
	m := tui.New(opts)
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 80})
	batch, ok := m.Init()().(tea.BatchMsg)
	if !ok {
		t.Fatal("Init did not batch its commands")
	}
	for _, cmd := range batch {
		msg := cmd()
		for msg != nil {
			_, next := m.Update(msg)
			if next == nil {
				break
			}
			msg = next()
			if _, tick := msg.(tea.BatchMsg); tick {
				break
			}
		}
	}
	if err := m.Err(); err != nil {
		t.Fatal(err)
	}
	return m.View()
}

// TestRunChecksSelectable: the cross-rank checks are listed by
// `tracelens analyzers` and switched with --enable/--disable like the
// single-trace analyzers: disabling the straggler drops it from a run's
// findings, enabling only it leaves it alone, and an unknown name lists
// both kinds.
func TestRunChecksSelectable(t *testing.T) {
	dir := fixture("runs/ddp_host_straggler")
	run := func(args ...string) (string, string, int) {
		var out, errOut bytes.Buffer
		code := runMain(&env{stdout: &out, stderr: &errOut}, args)
		return out.String(), errOut.String(), code
	}
	list, _, _ := run("analyzers", "--long")
	for _, c := range distributed.Checks() {
		if !strings.Contains(list, c.Name+" (cross-rank: runs only)\n") {
			t.Errorf("analyzers does not list %s", c.Name)
		}
	}
	ids := func(args ...string) []string {
		out, errOut, code := run(append([]string{"findings", "--format", "json"}, append(args, dir)...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		var res distributed.Result
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		var v []string
		for _, f := range res.Findings {
			v = append(v, f.ID)
		}
		return v
	}
	all := ids()
	if len(all) < 2 || all[0] != distributed.IDStraggler {
		t.Fatalf("findings %v, want the straggler first and a rank finding", all)
	}
	if got := ids("--disable", "straggler"); slices.Contains(got, distributed.IDStraggler) || len(got) != len(all)-1 {
		t.Errorf("--disable straggler: %v", got)
	}
	if got := ids("--enable", "straggler"); !slices.Equal(got, []string{distributed.IDStraggler}) {
		t.Errorf("--enable straggler: %v", got)
	}
	if got := ids("--enable", all[1]); slices.Contains(got, distributed.IDStraggler) || len(got) != 1 {
		t.Errorf("--enable %s: %v", all[1], got)
	}
	if _, errOut, code := run("findings", "--enable", "stragler", dir); code == 0 || !strings.Contains(errOut, "straggler") || !strings.Contains(errOut, "host-sync") {
		t.Errorf("unknown name: exit %d, %s", code, errOut)
	}
}

// TestTUIRanksWithPeerWait: the TUI analyzes the rank it shows with its
// peer waits, as report does: the waiting rank of a straggler run has a
// peer_wait line and a headline that leaves the wait out of GPU busy.
func TestTUIRanksWithPeerWait(t *testing.T) {
	dir := fixture("runs/ddp_compute_straggler")
	var opts tui.Options
	runTUIOptions(&opts, []string{dir}, &env{stderr: io.Discard})
	res, err := opts.LoadRun(nil)
	if err != nil {
		t.Fatal(err)
	}
	src := res.Ranks[0].Source
	cfg := opts.RankConfig(src)
	tr, err := loadTrace(&env{stderr: &bytes.Buffer{}}, src)
	if err != nil {
		t.Fatal(err)
	}
	r, err := analyze.Run(tr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if w := analyze.LedgerUs(r.StepStats.SteadyLedger, analyze.LinePeerWait); w < 0.4*r.StepStats.SteadyWallUs ||
		!strings.Contains(r.Headline().GPUBusy, "waiting for a peer rank") {
		t.Errorf("rank 0 of %s: peer wait %.0f µs of %.0f, headline %q", dir, w, r.StepStats.SteadyWallUs, r.Headline().GPUBusy)
	}
}

// TestRunMaxMemory: --max-memory caps each rank's model as it caps one
// trace's: a run whose ranks do not fit stops with exit 2 naming the
// budget, in findings and report alike.
func TestRunMaxMemory(t *testing.T) {
	dir := fixture("runs/ddp_host_straggler")
	for _, cmd := range []string{"findings", "report"} {
		var out, errOut bytes.Buffer
		code := runMain(&env{stdout: &out, stderr: &errOut}, []string{cmd, "--max-memory", "100KB", dir})
		if code != 2 || !strings.Contains(errOut.String(), "budget of 100.0 KB") {
			t.Errorf("%s --max-memory 100KB RUN: exit %d, %s", cmd, code, errOut.String())
		}
	}
}

// facesShowRankBusy: every face shows each rank's GPU busy time as the
// run's analysis computed it, spinning left out (distributed.RankRow's
// gpu_busy_us, checked against expect.py in distributed): the findings
// text and the report's Ranks table word it the same, the TUI's Ranks
// screen gives its share, export's runs table its nanoseconds.
func facesShowRankBusy(t *testing.T, rows []distributed.RankRow, text, md, out, view string) {
	t.Helper()
	ranks := section(md, "## Ranks")
	for _, r := range rows {
		busy := report.RankBusy(r)
		if !strings.Contains(text, fmt.Sprintf("rank %d %s", r.Rank, busy)) {
			t.Errorf("findings text lacks rank %d's GPU busy %s", r.Rank, busy)
		}
		if !strings.Contains(ranks, "| "+busy+" |") {
			t.Errorf("report's Ranks table lacks rank %d's GPU busy %s", r.Rank, busy)
		}
		if !strings.Contains(view, fmt.Sprintf("%.1f%%", 100*r.GPUBusyShare)) {
			t.Errorf("TUI's Ranks screen lacks rank %d's GPU busy %.1f%%", r.Rank, 100*r.GPUBusyShare)
		}
		files, _ := filepath.Glob(filepath.Join(out, export.TableRuns, "*rank"+strconv.Itoa(r.Rank)+".parquet"))
		if len(files) != 1 {
			t.Errorf("export wrote runs %v, want one for rank %d", files, r.Rank)
			continue
		}
		runs, err := parquet.ReadFile[export.RunRow](files[0])
		if err != nil || len(runs) != 1 || runs[0].GPUBusyNs == nil || runs[0].GPUSpinNs == nil {
			t.Errorf("export's runs row of rank %d: %v %+v", r.Rank, err, runs)
			continue
		}
		if d := float64(*runs[0].GPUBusyNs)/1e3 - r.GPUBusyUs; d > 0.001 || d < -0.001 {
			t.Errorf("export's gpu_busy_ns of rank %d is %d, the run's %.3f µs", r.Rank, *runs[0].GPUBusyNs, r.GPUBusyUs)
		}
		if d := float64(*runs[0].GPUSpinNs)/1e3 - r.GPUSpinUs; d > 0.001 || d < -0.001 {
			t.Errorf("export's gpu_spin_ns of rank %d is %d, the run's %.3f µs", r.Rank, *runs[0].GPUSpinNs, r.GPUSpinUs)
		}
	}
}

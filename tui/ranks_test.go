package tui

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/tracelens/tracelens/distributed"
	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
)

// runOptions opens a multi-rank run of fixtures/runs as `tracelens tui
// DIR` does.
func runOptions(dir string) Options {
	path := "../fixtures/runs/" + dir
	return Options{Name: dir, Renderer: plainRenderer(),
		LoadRun: func(func(read, total int64)) (*distributed.Result, error) {
			run, err := distributed.Load([]string{path}, distributed.Options{})
			if err != nil {
				return nil, err
			}
			return distributed.Analyze(run, distributed.ReadRankTrace, distributed.Options{}), nil
		},
		LoadRank: func(source string) Loader {
			return func(progress func(read, total int64)) (*trace.Trace, error) {
				return ingest.ReadFile(source, ingest.Options{Progress: progress})
			}
		}}
}

// loadedRun drives a run's loading the way bubbletea does: the run, then
// the rank the UI opens on.
func loadedRun(t *testing.T, opts Options, w, h int) *Model {
	t.Helper()
	m := New(opts)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	_, cmd := m.Update(m.loadRun())
	if m.Err() != nil {
		t.Fatal(m.Err())
	}
	m.Update(cmd())
	if m.Err() != nil || !m.loaded {
		t.Fatalf("rank not loaded: %v", m.Err())
	}
	return m
}

// TestRanksScreen opens a 2-rank DDP run whose rank 1 sleeps in its data
// loader: the UI opens on the Ranks screen showing the straggler's trace,
// its figures are those fixtures/recorded/expect/ranks.py computes, and
// Enter on rank 0 shows rank 0 on every screen.
func TestRanksScreen(t *testing.T) {
	b, err := os.ReadFile("../fixtures/recorded/expect/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	var want struct {
		Ranks map[string]struct {
			NCCLKernelUs  float64 `json:"nccl_kernel_us"`
			NCCLExposedUs float64 `json:"nccl_exposed_us"`
		} `json:"ranks"`
		Straggler struct {
			Rank int `json:"rank"`
		} `json:"straggler"`
	}
	if err := json.Unmarshal(all["runs/ddp_host_straggler"], &want); err != nil {
		t.Fatal(err)
	}
	m := loadedRun(t, runOptions("ddp_host_straggler"), 120, 40)
	if m.cur != scrRanks {
		t.Fatalf("a run opens on screen %d, want the ranks", m.cur+1)
	}
	if got := m.run.Ranks[m.rank].Rank; got != want.Straggler.Rank {
		t.Errorf("the screens show rank %d first, want the straggler %d", got, want.Straggler.Rank)
	}
	v := m.View()
	if !strings.Contains(v, "Straggler: rank 1") || !strings.Contains(v, "dataloader.next") {
		t.Errorf("ranks screen does not explain the straggler:\n%s", v)
	}
	for rank, r := range want.Ranks {
		var line string
		for _, l := range strings.Split(v, "\n") {
			if f := strings.Fields(strings.TrimLeft(l, "> ●")); len(f) > 0 && strings.TrimLeft(f[0], "●") == rank {
				line = l
			}
		}
		for _, fig := range []float64{r.NCCLKernelUs, r.NCCLExposedUs} {
			if s := us(fig).String(); !strings.Contains(line, " "+s+" ") {
				t.Errorf("rank %s row lacks %s (ranks.py): %q", rank, s, line)
			}
		}
	}
	// Drill into rank 0.
	rs := m.screens[scrRanks].(*ranksScreen)
	row := -1
	for i, r := range m.run.Ranks {
		if r.Rank == 0 {
			row = i
		}
	}
	rs.tbl.selectRow(row)
	cmd := press(m, "enter")
	if cmd == nil || m.loaded {
		t.Fatal("Enter on another rank does not read it")
	}
	// Run the batch as bubbletea would: the read, and the progress tick.
	batch, ok := cmd().(tea.BatchMsg)
	if !ok {
		t.Fatal("Enter on a rank returns no batch")
	}
	for _, c := range batch {
		if c != nil {
			m.Update(c())
		}
	}
	if !m.loaded {
		t.Fatal("rank 0 not loaded")
	}
	if m.cur != scrOverview || m.run.Ranks[m.rank].Rank != 0 || !strings.Contains(m.View(), "rank 0: rank0.pt.trace.json.gz") {
		t.Errorf("after Enter on rank 0: screen %d, rank %d:\n%s", m.cur+1, m.run.Ranks[m.rank].Rank, m.View())
	}
	press(m, "7")
	if !strings.Contains(m.View(), "●0") {
		t.Errorf("the ranks screen does not mark rank 0 as shown:\n%s", m.View())
	}
}

// TestRanksScreenPipeline: a 4-stage pipeline has no straggler, but its
// stages wait for each other: the Ranks screen says it is the bubble,
// not that no rank makes the others wait (its OTHERS WAIT column shows
// hundreds of milliseconds).
func TestRanksScreenPipeline(t *testing.T) {
	if _, err := os.Stat("../fixtures/runs/pp4_1f1b"); err != nil {
		t.Skip("issue 30's runs are not on this machine")
	}
	v := loadedRun(t, runOptions("pp4_1f1b"), 160, 40).View()
	if !strings.Contains(v, "the pipeline's stages wait for each other") || strings.Contains(v, "no rank makes the others wait") {
		t.Errorf("ranks screen of a pipeline:\n%s", v)
	}
}

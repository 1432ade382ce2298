package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/tracelens/tracelens/distributed"
	"github.com/tracelens/tracelens/trace"
)

// laneLines returns the lines of a timeline frame drawn as lanes (label
// column, then "|").
func laneLines(view string, labelW int) []string {
	var out []string
	for _, l := range strings.Split(view, "\n") {
		if len([]rune(l)) > labelW && []rune(l)[labelW] == '|' {
			out = append(out, l)
		}
	}
	return out
}

// TestTimelineFillsTheScreen: a trace of 7 lanes fills a 40-row
// terminal's body with lanes (their call stacks, taller GPU bars)
// instead of 7 rows, and the nesting rows name the items inside.
func TestTimelineFillsTheScreen(t *testing.T) {
	m := loaded(t, recordedOptions("train_sync_pageable.json.gz"), 120, 40)
	press(m, "5", "]", "]")
	v := m.View()
	ts := m.screens[scrTimeline].(*timelineScreen)
	rows := laneLines(v, ts.labelW)
	// 40 rows: tab bar, status line, header, ruler, cursor line, two
	// readout lines leave 33; the caps on a lane's rows may leave a few.
	if len(rows) < 28 {
		t.Errorf("the timeline draws %d rows of lanes in a 40-row terminal, want at least 28:\n%s", len(rows), v)
	}
	for _, want := range []string{"gpu0 s7", "s7 ranges", "cpu1 ops", "cpu2 py", "steps", "cpu2 ranges"} {
		if !strings.Contains(v, want) {
			t.Errorf("the timeline lacks lane %q", want)
		}
	}
	if strings.Contains(v, " rng ") {
		t.Errorf("a lane is still labelled rng:\n%s", v)
	}
	// The Python lane's rows below the first name frames the first row's
	// frames call (nn.Module's forward inside _call_impl).
	py := -1
	for i, r := range rows {
		if strings.Contains(r, "cpu2 py") {
			py = i
		}
	}
	if py < 0 || py+2 >= len(rows) || !strings.Contains(strings.Join(rows[py+1:py+4], "\n"), "forward") {
		t.Errorf("the Python lane's deeper rows do not name the frames inside:\n%s", strings.Join(rows, "\n"))
	}
	// A small terminal still shows every lane, one row each when need be.
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 14})
	v = m.View()
	checkScreen(t, v, 80, 14)
	if n := len(laneLines(v, ts.labelW)); n < 5 {
		t.Errorf("an 80×14 terminal shows %d lane rows:\n%s", n, v)
	}
}

// TestRunTimelineShowsEveryRank: on a run, the timeline reads the other
// ranks' traces and shows their lanes, grouped by rank, on the shown
// rank's clock.
func TestRunTimelineShowsEveryRank(t *testing.T) {
	m := loadedRun(t, runOptions("ddp_host_straggler"), 120, 60)
	cmd := press(m, "5")
	if cmd == nil {
		t.Fatal("the run's timeline asks for no other rank")
	}
	for _, msg := range runCmd(cmd) {
		m.Update(msg)
	}
	ts := m.screens[scrTimeline].(*timelineScreen)
	groups := map[string]int{}
	for _, l := range ts.lanes {
		groups[l.group]++
	}
	if len(groups) != 2 || groups["r0"] == 0 || groups["r1"] == 0 {
		t.Fatalf("lanes per rank %v, want r0 and r1", groups)
	}
	v := m.View()
	for _, want := range []string{"r0 gpu", "r1 gpu", "2 ranks on one clock"} {
		if !strings.Contains(v, want) {
			t.Errorf("the run's timeline lacks %q:\n%s", want, v)
		}
	}
	// The other rank's lanes are its trace's times moved by the clock
	// shift; the whole trace covers both ranks.
	other := 1 - m.rank
	shift := clockShift(m.run, other, m.rank)
	for _, l := range ts.lanes {
		if l.own || l.kind != laneGPU {
			continue
		}
		g := &l.t.GPU[l.ref(0)]
		if l.start(0) != g.Start+trace.Time(shift) {
			t.Errorf("rank lane %s starts at %d, want its trace's %d moved by %d", l.what, l.start(0), g.Start, shift)
		}
		if l.start(0) < ts.whole.Start || l.end(l.n-1) > ts.whole.End {
			t.Errorf("the whole trace %v does not cover rank lane %s", ts.whole, l.what)
		}
	}
	// Enter on another rank's item does not open the shown rank's.
	for i, li := range ts.shown {
		if !ts.lanes[li].own {
			ts.lane = i
			break
		}
	}
	press(m, "enter")
	if m.cur != scrTimeline {
		t.Errorf("Enter on another rank's lane left the timeline")
	}
	// "/r1" keeps rank 1's lanes.
	press(m, "/", "r", "1", "enter")
	for _, li := range ts.shown {
		if ts.lanes[li].group != "r1" {
			t.Errorf("filter r1 keeps %s", ts.lanes[li].what)
		}
	}
}

// TestClockShift moves a rank's times by the offsets distributed
// measured, only when it corrected them.
func TestClockShift(t *testing.T) {
	run := &distributed.Result{ClockCorrected: true, Ranks: []distributed.RankRow{{Rank: 0}, {Rank: 1, ClockOffsetUs: 500}}}
	if got := clockShift(run, 1, 0); got != -500_000 {
		t.Errorf("rank 1 on rank 0's clock: shift %d, want -500µs", got)
	}
	if got := clockShift(run, 0, 1); got != 500_000 {
		t.Errorf("rank 0 on rank 1's clock: shift %d, want +500µs", got)
	}
	run.ClockCorrected = false
	if got := clockShift(run, 1, 0); got != 0 {
		t.Errorf("uncorrected clocks: shift %d, want 0", got)
	}
}

// runCmd runs a command as bubbletea would, batches included, and
// returns the messages.
func runCmd(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, runCmd(c)...)
		}
		return out
	}
	return []tea.Msg{msg}
}

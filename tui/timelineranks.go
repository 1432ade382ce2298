package tui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/tracelens/tracelens/distributed"
	"github.com/tracelens/tracelens/trace"
)

// A run's timeline shows every rank's lanes, grouped under the rank's
// label, on one clock: the shown rank's, the others' times moved by the
// clock offsets distributed measured when it corrected them (ClockCorrected;
// otherwise the ranks' clocks agree as recorded). The other ranks'
// traces are read when the timeline is first shown, in the background.

// rankGroup is the label of run rank row's lanes.
func rankGroup(run *distributed.Result, row int) string {
	return "r" + itoa(run.Ranks[row].Rank)
}

// clockShift moves rank row's times onto rank shown's clock.
func clockShift(run *distributed.Result, row, shown int) trace.Duration {
	if !run.ClockCorrected {
		return 0
	}
	return us(run.Ranks[shown].ClockOffsetUs) - us(run.Ranks[row].ClockOffsetUs)
}

// ranksLanesMsg carries the other ranks' lanes, per row of run.Ranks
// (nil for the shown rank and for a rank that could not be read).
type ranksLanesMsg struct {
	d     *data // the data the lanes were read for
	lanes [][]lane
	errs  []string
}

// askRanks returns the command that reads the other ranks' traces for
// the timeline, the first time a run's timeline is shown.
func (m *Model) askRanks() tea.Cmd {
	ts, ok := m.screens[scrTimeline].(*timelineScreen)
	d := m.data
	if !ok || d == nil || d.run == nil || ts.ranksAsked || m.opts.LoadRank == nil || len(d.run.Ranks) < 2 {
		return nil
	}
	ts.ranksAsked, ts.ranksNote = true, "reading the other ranks' traces…"
	run, shown, loadRank := d.run, d.rank, m.opts.LoadRank
	return func() tea.Msg {
		msg := ranksLanesMsg{d: d, lanes: make([][]lane, len(run.Ranks))}
		for row, r := range run.Ranks {
			if row == shown {
				continue
			}
			t, err := loadRank(r.Source)(func(int64, int64) {})
			if err != nil {
				msg.errs = append(msg.errs, "rank "+itoa(r.Rank)+": "+sanitize(err.Error()))
				continue
			}
			msg.lanes[row] = lanesOf(t, clockShift(run, row, shown), rankGroup(run, row), false)
		}
		return msg
	}
}

// addRanks puts the other ranks' lanes around the shown rank's, in rank
// order, keeping the cursor on its lane and widening the whole trace to
// every rank's activity.
func (s *timelineScreen) addRanks(msg ranksLanesMsg) {
	var keep *lane
	if len(s.shown) > 0 {
		keep = &s.lanes[s.shown[min(s.lane, len(s.shown)-1)]]
	}
	keepLabel, keepGroup := "", ""
	if keep != nil {
		keepLabel, keepGroup = keep.label, keep.group
	}
	var all []lane
	for row := range msg.lanes {
		if row == s.d.rank {
			for _, l := range s.lanes {
				if l.own {
					all = append(all, l)
				}
			}
			continue
		}
		all = append(all, msg.lanes[row]...)
	}
	s.setLanes(all)
	for i := range all {
		l := &all[i]
		if l.n == 0 || len(l.segEnd) == 0 {
			continue
		}
		s.whole.Start = min(s.whole.Start, l.start(0))
		s.whole.End = max(s.whole.End, l.segEnd[len(l.segEnd)-1])
	}
	if s.step < 0 {
		s.win = s.whole
	}
	s.setFilter(s.filter)
	for i, li := range s.shown {
		if all[li].label == keepLabel && all[li].group == keepGroup {
			s.lane = i
		}
	}
	s.ranksNote = itoa(len(msg.lanes)-len(msg.errs)) + " ranks on one clock"
	if len(msg.errs) > 0 {
		s.ranksNote += "; not read: " + msg.errs[0]
	}
}

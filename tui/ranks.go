package tui

import (
	"cmp"
	"fmt"
	"path/filepath"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/tracelens/tracelens/distributed"
)

// ranksScreen is screen 7: the ranks of a multi-rank run side by side
// (tracelens tui DIR): per rank its step, its GPU busy share (its
// spinning communication kernels counted as waiting), communication
// kernel time, how much of it is exposed, waiting for later ranks versus
// moving data, how late it arrives at collectives on average (SKEW) and
// how long it makes the others wait;
// the straggler explained; the run's findings. Enter drills into a rank:
// every other screen then shows that rank's trace; ↓ past the last rank
// moves to the run's findings, and Enter opens one.
type ranksScreen struct {
	d   *data
	run *distributed.Result
	// shown is the index (into run.Ranks) of the rank the other screens
	// show.
	shown int
	tbl   *table
	runFindings
}

// newRanksScreen is the Ranks screen of a run: one row per rank, the
// straggler and the ranks that wait most coloured, the shown rank marked.
func newRanksScreen(d *data) *ranksScreen {
	run, shown := d.run, d.rank
	s := &ranksScreen{d: d, run: run, shown: shown}
	if run == nil {
		return s
	}
	s.runFindings = newRunFindings(run)
	rs := run.Ranks
	n := len(rs)
	straggler := -1
	if run.Straggler != nil {
		straggler = run.Straggler.Rank
	}
	desc := func(f func(r *distributed.RankRow) float64) []int32 {
		return orderBy(n, func(a, b int) int { return cmp.Compare(f(&rs[b]), f(&rs[a])) })
	}
	// The straggler's rank and the wait it causes are red; a rank whose
	// communication is mostly waiting for later ranks is yellow.
	stragglerStyle := func(row int, st *styles) lipgloss.Style {
		if rs[row].Rank == straggler {
			return st.bad
		}
		return st.plain
	}
	waitStyle := func(row int, st *styles) lipgloss.Style {
		if r := &rs[row]; r.CommKernelUs > 0 && r.WaitUs > r.CommKernelUs/2 {
			return st.warn
		}
		return st.plain
	}
	cols := []column{
		{title: "RANK", width: 6, right: true, asc: true, style: stragglerStyle, order: orderBy(n, func(a, b int) int { return cmp.Compare(rs[a].Rank, rs[b].Rank) })},
		{title: "STEP", width: 8, right: true, order: desc(func(r *distributed.RankRow) float64 { return r.StepMedianUs })},
		{title: "GPU BUSY", width: 8, right: true, order: desc(func(r *distributed.RankRow) float64 { return r.GPUBusyShare })},
		{title: "COMM", width: 8, right: true, order: desc(func(r *distributed.RankRow) float64 { return r.CommKernelUs })},
		{title: "EXPOSED", width: 8, right: true, order: desc(func(r *distributed.RankRow) float64 { return r.ExposedCommUs })},
		{title: "OVERLAP", width: 7, right: true, drop: 3, order: desc(func(r *distributed.RankRow) float64 { return r.OverlapShare })},
		{title: "WAIT", width: 8, right: true, style: waitStyle, order: desc(func(r *distributed.RankRow) float64 { return r.WaitUs })},
		{title: "TRANSFER", width: 8, right: true, drop: 2, order: desc(func(r *distributed.RankRow) float64 { return r.TransferUs })},
		{title: "SKEW", width: 8, right: true, order: desc(func(r *distributed.RankRow) float64 { return r.StartSkewUs })},
		{title: "LAST", width: 5, right: true, drop: 4, order: desc(func(r *distributed.RankRow) float64 { return float64(r.LastArrivals) })},
		{title: "OTHERS WAIT", width: 11, right: true, style: stragglerStyle, order: desc(func(r *distributed.RankRow) float64 { return r.CausedWaitUs })},
		{title: "CLOCK", width: 8, right: true, drop: 1, order: desc(func(r *distributed.RankRow) float64 { return r.ClockOffsetUs })},
		{title: "TRACE", asc: true, order: orderBy(n, func(a, b int) int { return cmp.Compare(rs[a].Source, rs[b].Source) })},
	}
	s.tbl = newTable(cols, nil, nil, 0, s.cell)
	s.tbl.selectRow(shown)
	return s
}

// cell is the text of the ranks table at row, col.
func (s *ranksScreen) cell(row, col int) string {
	dur := func(v float64) string { return us(v).String() }
	r := &s.run.Ranks[row]
	switch col {
	case 0:
		mark := " "
		if row == s.shown {
			mark = "●"
		}
		return mark + itoa(r.Rank)
	case 1:
		return dur(r.StepMedianUs)
	case 2:
		// The rank's own GPU work: its spinning NCCL kernels count
		// as waiting (distributed.RankRow.GPUBusyShare).
		return fmt.Sprintf("%.1f%%", r.GPUBusyShare*100)
	case 3:
		return dur(r.CommKernelUs)
	case 4:
		return dur(r.ExposedCommUs)
	case 5:
		return fmt.Sprintf("%.0f%%", r.OverlapShare*100)
	case 6:
		return dur(r.WaitUs)
	case 7:
		return dur(r.TransferUs)
	case 8:
		return dur(r.StartSkewUs)
	case 9:
		return itoa(r.LastArrivals)
	case 10:
		return dur(r.CausedWaitUs)
	case 11:
		return dur(r.ClockOffsetUs)
	case 12:
		return sanitize(filepath.Base(r.Source))
	}
	return ""
}

func (s *ranksScreen) title() string { return "Ranks" }

func (s *ranksScreen) handle(m *Model, msg tea.KeyMsg) bool {
	if s.run == nil {
		return false
	}
	if s.detail != nil || s.focus {
		return s.findingKeys(m, s.d, msg)
	}
	if key.Matches(msg, m.keys.down) && s.fs != nil && s.tbl.cursor == len(s.tbl.view)-1 {
		s.setFocus(true)
		return true
	}
	switch {
	case key.Matches(msg, m.keys.open):
		if row, ok := s.tbl.selected(); ok {
			m.next = m.openRank(row)
		}
		return true
	case key.Matches(msg, m.keys.sort):
		s.tbl.cycleSort()
		return true
	case key.Matches(msg, m.keys.reverse):
		return s.tbl.flipSort()
	}
	return tableKeys(s.tbl, &m.keys, msg)
}

func (s *ranksScreen) scroll(d int) {
	switch {
	case s.run == nil:
	case s.detail != nil:
		s.detail.move(d)
	case s.focus:
		s.fs.move(d)
	default:
		s.tbl.move(d)
	}
}

// header is what the screen says above the rank table: the run, the
// straggler explained.
func (s *ranksScreen) header(w int, st *styles) []string {
	r := s.run
	line := fmt.Sprintf(" %d ranks of %d · %d collectives matched", len(r.Ranks), r.WorldSize, r.Collectives)
	if len(r.Missing) > 0 {
		line += fmt.Sprintf(" · ranks %v have no trace", r.Missing)
	}
	if r.ClockCorrected {
		line += " · clock offsets removed"
	}
	out := []string{st.header.Render(cut(line, w))}
	if sg := r.Straggler; sg != nil {
		for _, l := range wrap(fmt.Sprintf("Straggler: rank %d (%s), %s late per step: %s", sg.Rank, sg.Kind, us(sg.LateUs), sanitize(sg.Sentence)), w-1) {
			out = append(out, st.bad.Render(" "+l))
		}
	} else if len(r.Pipeline) > 0 {
		// The stages' waiting is the schedule's, not a late rank's.
		out = append(out, st.header.Render(cut(" No straggler: the pipeline's stages wait for each other in send/recv (its bubble: see the run findings).", w)))
	} else {
		out = append(out, st.good.Render(cut(" No straggler: no rank makes the others wait much.", w)))
	}
	return append(out, "")
}

// dimensions lists the run's parallelism dimensions.
func (s *ranksScreen) dimensions(w int, st *styles) []string {
	r := s.run
	var out []string
	if len(r.Dimensions) > 0 {
		out = append(out, "", st.header.Render(cut(fmt.Sprintf(" %-20s %11s %9s %9s %9s %9s", "DIMENSION", "COLLECTIVES", "COMM", "EXPOSED", "WAIT", "BYTES"), w)))
		for _, d := range r.Dimensions {
			out = append(out, cut(fmt.Sprintf(" %-20s %11d %9s %9s %9s %9s", cut(sanitize(d.Dimension), 20), d.Collectives,
				us(d.CommKernelUs), us(d.ExposedCommUs), us(d.WaitUs), byteCount(d.Bytes)), w))
		}
	}
	return out
}

// notes lists the run's combined saving, unmatched kernels and warnings.
func (s *ranksScreen) notes(w int, st *styles) []string {
	r := s.run
	var out []string
	if len(r.Findings) > 0 && r.CombinedSavingUs > 0 {
		out = append(out, cut(fmt.Sprintf("  all findings fixed: ~%s per step (rank %d's own findings ranked with the run's)", us(r.CombinedSavingUs), r.Rank), w))
	}
	for _, u := range r.Unmatched {
		out = append(out, st.dim.Render(cut(fmt.Sprintf(" unmatched: rank %d, group %s: %d communication kernels (%s)", u.Rank, sanitize(u.Group), u.Count, sanitize(u.Reason)), w)))
	}
	for _, warn := range r.Warnings {
		out = append(out, st.dim.Render(cut(" note: "+sanitize(warn), w)))
	}
	return out
}

// byteCount prints bytes in binary units.
func byteCount(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	v, u := float64(b), 0
	for v >= unit && u < 4 {
		v /= unit
		u++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGT"[u-1])
}

func (s *ranksScreen) render(w, h int, st *styles) []string {
	if s.run == nil {
		return []string{"", cut("  One trace is open. To compare the ranks of a multi-rank run: tracelens tui DIR (or GLOB, or the rank files)", w)}
	}
	if s.detail != nil {
		return s.renderDetail(s.d, w, h, st)
	}
	head, dims, notes := s.header(w, st), s.dimensions(w, st), s.notes(w, st)
	// The findings get up to their rows; the rank table what is left, at
	// least its header and three ranks; notes, then dimensions, then
	// findings give way first.
	fh := 0
	if s.fs != nil {
		fh = 2 + min(len(s.run.Findings), 8) // blank, header, rows
	}
	need := min(len(s.run.Ranks), 3) + 1
	for _, part := range []*[]string{&notes, &dims} {
		if over := len(head) + len(dims) + len(notes) + fh + need - h; over > 0 {
			*part = (*part)[:max(len(*part)-over, 0)]
		}
	}
	if over := len(head) + len(dims) + len(notes) + fh + need - h; over > 0 {
		fh = max(fh-over, 0)
	}
	room := min(h-len(head)-len(dims)-len(notes)-fh, len(s.tbl.view)+1)
	out := append(head, s.tbl.render(w, max(room, 2), st)...)
	out = append(out, dims...)
	if fh >= 3 {
		out = append(out, "")
		out = append(out, s.fs.render(w, fh-1, st)...)
	}
	return append(out, notes...)
}

func (s *ranksScreen) hint() string {
	if s.run == nil {
		return "ranks"
	}
	if h := s.findingHint(); h != "" {
		return h
	}
	return s.tbl.position() + " ranks  sort " + s.tbl.sortName() + "  Enter shows this rank  ● shown  ↓ run findings"
}

func (s *ranksScreen) setFilter(f string) bool {
	if s.run == nil || s.detail != nil || s.focus {
		return false
	}
	s.tbl.setFilter(f)
	return true
}

func (s *ranksScreen) back() bool {
	if s.run == nil {
		return false
	}
	return s.closeFinding()
}

func (s *ranksScreen) save() func() {
	if s.run == nil {
		return func() {}
	}
	tbl, rf := s.tbl.clone(), s.runFindings.saved()
	return func() {
		restoreTable(s.tbl, tbl)
		s.runFindings.restore(rf)
	}
}

// selection is the selected rank's trace file or row, or the run
// finding's.
func (s *ranksScreen) selection(row bool) (string, bool) {
	switch {
	case s.run == nil:
		return "", false
	case s.detail != nil:
		return s.lines.selection(s.d, s.detail, row)
	case s.focus:
		return tableSelection(s.fs, row, nil)
	}
	if r, ok := s.tbl.selected(); ok && !row {
		return sanitize(s.run.Ranks[r].Source), true
	}
	return tableSelection(s.tbl, row, nil)
}

// openRank reads rank row of the run and shows it on every screen; the
// Ranks screen keeps its place.
func (m *Model) openRank(row int) tea.Cmd {
	if m.run == nil || row == m.rank {
		m.goTo(scrOverview)
		return nil
	}
	m.loaded, m.started = false, time.Now()
	m.prog.read.Store(0)
	m.prog.total.Store(0)
	return tea.Batch(m.loadRank(m.run, row), tick())
}

// rankName is how the UI names rank row's trace.
func rankName(run *distributed.Result, row int) string {
	r := &run.Ranks[row]
	return fmt.Sprintf("rank %d: %s", r.Rank, sanitize(filepath.Base(r.Source)))
}

// firstRank is the rank a run opens on: the straggler, whose trace says
// why the others wait, else the first.
func firstRank(run *distributed.Result) int {
	if run.Straggler != nil {
		for i, r := range run.Ranks {
			if r.Rank == run.Straggler.Rank {
				return i
			}
		}
	}
	return 0
}

package tui

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/progress"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/distributed"
	"github.com/tracelens/tracelens/trace"
)

// Loader reads a trace, reporting progress as bytes consumed out of total
// (0 when unknown). It runs on a background goroutine while the UI shows a
// progress bar.
type Loader func(progress func(read, total int64)) (*trace.Trace, error)

// Options configure a UI session.
type Options struct {
	// Name is what the progress screen says is being read.
	Name string
	// Stop, when not nil, ends the UI once it is done, restoring the
	// terminal (Run then returns): how a process stopping for its memory
	// budget leaves the terminal usable.
	Stop context.Context
	// Load reads the trace to explore (NEW in a diff).
	Load Loader
	// BaseName and LoadBase, when set, read the BASE trace of a diff and
	// screen 6 compares the two.
	BaseName string
	LoadBase Loader
	// LoadRun, when set, reads a multi-rank run (tracelens tui DIR)
	// instead of Load: screen 7 compares its ranks and the other screens
	// show one rank's trace, read with LoadRank from the rank's source
	// file: the straggler's first, then the one Enter picks on screen 7.
	LoadRun  func(progress func(read, total int64)) (*distributed.Result, error)
	LoadRank func(source string) Loader
	// RankConfig, when set, is the analysis configuration of the rank
	// read from source (its peer waits, so that its ledger tells its
	// spinning in collectives apart); nil analyzes ranks as lone traces.
	RankConfig func(source string) analyze.Config
	// Analyze is the analysis of each trace read (the command's one
	// load-and-analyze path); nil means analyze.Run. The screens only
	// render its Result and View.
	Analyze func(*trace.Trace, analyze.Config) (*analyze.Result, error)
	// Renderer draws styles for the terminal the UI writes to; nil means
	// lipgloss's default (stdout, honouring NO_COLOR).
	Renderer *lipgloss.Renderer
	// Stage, when set, is told as each part of loading ends ("tables
	// built", "screens built", "first frame drawn"): what the command's
	// $TRACELENS_STAGES prints, so a slow first frame can be pinned on a
	// part without a profiler.
	Stage func(what string)
}

// screen is one of the numbered views.
type screen interface {
	// title is the tab label.
	title() string
	// handle reacts to a key the model did not consume and reports
	// whether it used it.
	handle(m *Model, msg tea.KeyMsg) bool
	// scroll moves the cursor or view by d rows (mouse wheel).
	scroll(d int)
	// render draws the screen body in w×h cells.
	render(w, h int, st *styles) []string
	// hint is the screen's part of the status line.
	hint() string
	// setFilter applies the / filter; false when the screen has none.
	setFilter(f string) bool
	// back closes a detail view and reports whether one was open.
	back() bool
	// save captures the screen's state (cursor, scroll, sort, filter,
	// open detail) and returns what puts it back (the back stack).
	save() (restore func())
}

const (
	scrOverview = iota
	scrKernels
	scrOps
	scrFindings
	scrTimeline
	scrDiff
	scrRanks
	numScreens
)

var screenTitles = [numScreens]string{"Overview", "Kernels", "Ops", "Findings", "Timeline", "Diff", "Ranks"}

// Model is the bubbletea model of the whole UI.
type Model struct {
	opts   Options
	st     *styles
	width  int
	height int

	// Loading state: progress is written by the loading goroutine and read
	// on each tick, so the UI never blocks on ingest.
	prog    *loadProgress
	bar     progress.Model
	started time.Time
	loaded  bool
	// drawn is whether a loaded frame has been drawn (Options.Stage).
	drawn bool
	err   error

	data    *data
	screens [numScreens]screen
	cur     int
	filters [numScreens]string
	editing bool // typing a / filter
	help    bool

	keys     keyMap
	input    textinput.Model // the / prompt
	helpView help.Model

	// run is the multi-rank run being explored, nil for a single trace;
	// rank is the index into run.Ranks of the rank the screens show.
	run  *distributed.Result
	rank int
	// next is a command a screen's key handler asks for (reading another
	// rank), returned by Update.
	next tea.Cmd
	// stack is the back stack: where each followed link came from.
	stack []place
	// filterErr is why the / prompt's text is not a valid regexp (the
	// previous filter stays applied); nil when it is.
	filterErr error
	// flash is a one-time message for the status line ("copied"),
	// cleared by the next key.
	flash string
	// osc is an escape sequence for the terminal (OSC 52, the clipboard)
	// that the frames carry until oscClearMsg number oscSeq arrives.
	osc    string
	oscSeq int
}

// loadProgress is shared between the loading goroutine and the UI.
type loadProgress struct {
	phase atomic.Value // string
	read  atomic.Int64
	total atomic.Int64
}

type tickMsg struct{}

type loadedMsg struct {
	d       *data
	screens [numScreens]screen
	err     error
}

// runLoadedMsg carries a multi-rank run's analysis; the rank to show is
// read next.
type runLoadedMsg struct {
	run *distributed.Result
	err error
}

// New returns the model for a session; run it with tea.NewProgram or Run.
func New(opts Options) *Model {
	r := opts.Renderer
	if r == nil {
		r = lipgloss.DefaultRenderer()
	}
	if opts.Analyze == nil {
		opts.Analyze = analyze.Run
	}
	st := newStyles(r)
	m := &Model{opts: opts, st: st, width: 80, height: 24, prog: &loadProgress{}, started: time.Now(),
		keys: newKeyMap(), input: newFilterInput(st), helpView: newHelp(st), bar: newProgressBar(r, st)}
	m.prog.phase.Store("reading")
	return m
}

// Err is the error that ended the session (a trace that could not be
// read), or nil.
func (m *Model) Err() error { return m.err }

// Init starts loading in the background.
func (m *Model) Init() tea.Cmd {
	if m.opts.LoadRun != nil {
		return tea.Batch(m.loadRun, tick())
	}
	return tea.Batch(m.load, tick())
}

// loadRun reads and analyses every rank of a run (bubbletea's command
// goroutine).
func (m *Model) loadRun() tea.Msg {
	m.prog.phase.Store("reading the ranks of " + sanitize(m.opts.Name))
	run, err := m.opts.LoadRun(func(read, total int64) {
		m.prog.read.Store(read)
		m.prog.total.Store(total)
	})
	if err == nil && (run == nil || len(run.Ranks) == 0) {
		err = fmt.Errorf("%s: no rank traces in the run", m.opts.Name)
	}
	return runLoadedMsg{run, err}
}

// loadRank returns the command that reads rank row of run and builds
// every screen for it.
func (m *Model) loadRank(run *distributed.Result, row int) tea.Cmd {
	name, src, loadRank, prog, rankCfg, analyzeFn := rankName(run, row), run.Ranks[row].Source, m.opts.LoadRank, m.prog, m.opts.RankConfig, m.opts.Analyze
	return func() tea.Msg {
		prog.phase.Store("reading " + name)
		if loadRank == nil {
			return loadedMsg{err: fmt.Errorf("no way to read rank traces")}
		}
		t, err := loadRank(src)(func(read, total int64) {
			prog.read.Store(read)
			prog.total.Store(total)
		})
		if err != nil {
			return loadedMsg{err: err}
		}
		prog.phase.Store("analysing " + name)
		var cfg analyze.Config
		if rankCfg != nil {
			cfg = rankCfg(src)
		}
		d, err := buildDataWith(t, nil, cfg, analyzeFn)
		if err != nil {
			return loadedMsg{err: err}
		}
		d.name, d.run, d.rank = name, run, row
		return loadedMsg{d: d, screens: newScreens(d)}
	}
}

func tick() tea.Cmd {
	return tea.Tick(100*time.Millisecond, func(time.Time) tea.Msg { return tickMsg{} })
}

// load runs on bubbletea's command goroutine: ingest, then analysis and
// every precomputed table, so the first interactive frame only renders.
func (m *Model) load() tea.Msg {
	report := func(read, total int64) {
		m.prog.read.Store(read)
		m.prog.total.Store(total)
	}
	if m.opts.Load == nil {
		return loadedMsg{err: fmt.Errorf("no trace to load")}
	}
	var base *trace.Trace
	if m.opts.LoadBase != nil {
		m.prog.phase.Store("reading " + sanitize(m.opts.BaseName))
		b, err := m.opts.LoadBase(report)
		if err != nil {
			return loadedMsg{err: err}
		}
		base = b
	}
	m.prog.phase.Store("reading " + sanitize(m.opts.Name))
	m.prog.read.Store(0)
	m.prog.total.Store(0)
	t, err := m.opts.Load(report)
	if err != nil {
		return loadedMsg{err: err}
	}
	m.prog.phase.Store("analysing " + sanitize(m.opts.Name))
	d, err := buildDataWith(t, base, analyze.Config{}, m.opts.Analyze)
	if err != nil {
		return loadedMsg{err: err}
	}
	m.stage("analysis and tables built")
	screens := newScreens(d)
	m.stage("screens built")
	return loadedMsg{d: d, screens: screens}
}

// stage tells Options.Stage that what has ended.
func (m *Model) stage(what string) {
	if m.opts.Stage != nil {
		m.opts.Stage(what)
	}
}

// newScreens builds every screen's precomputed state (sorted orders,
// timeline lanes).
//
// The screens only read d: the two that walk the whole trace (the
// timeline's lanes and filter, the op tree's rows) are built beside the
// others, each on its own goroutine, since the first frame waits for all.
func newScreens(d *data) [numScreens]screen {
	var ops, timeline screen
	var wg sync.WaitGroup
	wg.Go(func() { ops = newOpsScreen(d) })
	wg.Go(func() { timeline = newTimeline(d) })
	s := [numScreens]screen{
		scrOverview: newOverview(d),
		scrKernels:  newKernelsScreen(d),
		scrFindings: newFindingsScreen(d),
		scrDiff:     newDiffScreen(d),
		scrRanks:    newRanksScreen(d),
	}
	wg.Wait()
	s[scrOps], s[scrTimeline] = ops, timeline
	return s
}

// Update handles one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return m, nil
	case tickMsg:
		if m.loaded {
			return m, nil
		}
		return m, tick()
	case loadedMsg:
		if msg.err != nil {
			m.err = msg.err
			return m, tea.Quit
		}
		first := m.data == nil
		m.data, m.screens, m.loaded = msg.d, msg.screens, true
		// The places on the back stack were on the screens just replaced.
		m.stack = nil
		switch {
		case m.data.diff != nil:
			// `tui BASE NEW` asks for the comparison: open on it.
			m.cur = scrDiff
		case m.data.run != nil && first:
			// `tui DIR` asks for the run: open on its ranks.
			m.cur = scrRanks
		case m.data.run != nil:
			// A rank picked on screen 7: show its trace.
			m.rank = m.data.rank
			m.cur = scrOverview
		}
		return m, nil
	case runLoadedMsg:
		if msg.err != nil {
			m.err = msg.err
			return m, tea.Quit
		}
		m.run = msg.run
		m.rank = firstRank(m.run)
		return m, m.loadRank(m.run, m.rank)
	case tea.MouseMsg:
		if m.loaded && msg.Action == tea.MouseActionPress {
			switch msg.Button {
			case tea.MouseButtonWheelUp:
				m.screens[m.cur].scroll(-3)
			case tea.MouseButtonWheelDown:
				m.screens[m.cur].scroll(3)
			}
		}
		return m, nil
	case tea.KeyMsg:
		m.flash = ""
		return m, m.key(msg)
	case oscClearMsg:
		if int(msg) == m.oscSeq {
			m.osc = ""
		}
		return m, nil
	case editorDoneMsg:
		m.flash = msg.text()
		return m, nil
	case ranksLanesMsg:
		// Lanes read for a rank no longer shown are dropped.
		if msg.d == m.data {
			m.screens[scrTimeline].(*timelineScreen).addRanks(msg)
		}
		return m, nil
	}
	return m, nil
}

func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste {
		// Keys typed faster than the terminal is read arrive as one
		// message ("/mul"): each is a key of its own.
		for _, r := range msg.Runes {
			if cmd := m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt}); cmd != nil {
				return cmd
			}
		}
		return nil
	}
	km := &m.keys
	if key.Matches(msg, km.forceQuit) {
		return tea.Quit
	}
	if !m.loaded {
		if key.Matches(msg, km.quit, km.back) {
			return tea.Quit
		}
		return nil
	}
	if m.editing {
		m.editFilter(msg)
		return nil
	}
	if m.help {
		// Help says any key closes it, q included.
		m.help = false
		return nil
	}
	switch {
	case key.Matches(msg, km.quit):
		return tea.Quit
	case key.Matches(msg, km.help):
		m.help = true
	case key.Matches(msg, km.next):
		m.switchTo((m.cur + 1) % numScreens)
	case key.Matches(msg, km.prev):
		m.switchTo((m.cur + numScreens - 1) % numScreens)
	case key.Matches(msg, km.screen):
		m.switchTo(int(msg.Runes[0] - '1'))
	case key.Matches(msg, km.copyName, km.copyRow):
		return m.copySelection(key.Matches(msg, km.copyRow))
	case key.Matches(msg, km.edit):
		return m.editSource()
	case key.Matches(msg, km.filter):
		if m.screens[m.cur].setFilter(m.filters[m.cur]) {
			m.editing = true
			m.input.SetValue(m.filters[m.cur])
			m.input.CursorEnd()
			m.input.Focus()
		}
	case key.Matches(msg, km.back):
		if m.pop() {
			break
		}
		if !m.screens[m.cur].back() && m.filters[m.cur] != "" {
			m.filters[m.cur] = ""
			m.screens[m.cur].setFilter("")
		}
	default:
		m.screens[m.cur].handle(m, msg)
	}
	next := m.next
	m.next = nil
	if m.loaded && m.cur == scrTimeline {
		if ask := m.askRanks(); ask != nil {
			return tea.Batch(next, ask)
		}
	}
	return next
}

// switchTo shows screen s, chosen by the user: the trail of followed
// links is left, so the back stack empties.
func (m *Model) switchTo(s int) {
	m.cur = s
	m.stack = nil
}

// editFilter handles keys while the / prompt is open: the filter applies
// as it is typed, a Go regexp or a plain substring; text that is not a
// valid regexp leaves the last valid filter applied and the prompt says
// why. Enter keeps the filter (not while the text is invalid), Esc clears
// it; the rest is textinput's line editing.
func (m *Model) editFilter(msg tea.KeyMsg) {
	switch {
	case key.Matches(msg, m.keys.accept):
		if m.filterErr != nil {
			return
		}
		m.editing = false
		m.input.Blur()
		return
	case key.Matches(msg, m.keys.cancel):
		m.editing = false
		m.input.Blur()
		m.input.SetValue("")
	default:
		// The cursor does not blink and the prompt has no clipboard, so
		// textinput returns no command worth running.
		m.input, _ = m.input.Update(msg)
	}
	f := sanitize(m.input.Value())
	if f != m.input.Value() {
		m.input.SetValue(f)
	}
	if _, err := compileFilter(f); err != nil {
		m.filterErr = err
		return
	}
	m.filterErr = nil
	if f != m.filters[m.cur] {
		m.filters[m.cur] = f
		m.screens[m.cur].setFilter(f)
	}
}

// goTo switches to screen s (used by links between screens).
func (m *Model) goTo(s int) { m.cur = s }

func itoa(n int) string { return strconv.Itoa(n) }

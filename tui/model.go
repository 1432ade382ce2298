package tui

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

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
	// Load reads the trace to explore (NEW in a diff).
	Load Loader
	// BaseName and LoadBase, when set, read the BASE trace of a diff and
	// screen 6 compares the two.
	BaseName string
	LoadBase Loader
	// Renderer draws styles for the terminal the UI writes to; nil means
	// lipgloss's default (stdout, honouring NO_COLOR).
	Renderer *lipgloss.Renderer
}

// screen is one of the numbered views.
type screen interface {
	// title is the tab label.
	title() string
	// handle reacts to a key the model did not consume and reports
	// whether it used it.
	handle(m *Model, key string) bool
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
}

const (
	scrOverview = iota
	scrKernels
	scrOps
	scrFindings
	scrTimeline
	scrDiff
	numScreens
)

var screenTitles = [numScreens]string{"Overview", "Kernels", "Ops", "Findings", "Timeline", "Diff"}

// Model is the bubbletea model of the whole UI.
type Model struct {
	opts   Options
	st     *styles
	width  int
	height int

	// Loading state: progress is written by the loading goroutine and read
	// on each tick, so the UI never blocks on ingest.
	prog    *progress
	started time.Time
	loaded  bool
	err     error

	data    *data
	screens [numScreens]screen
	cur     int
	filters [numScreens]string
	editing bool // typing a / filter
	help    bool
}

// progress is shared between the loading goroutine and the UI.
type progress struct {
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

// New returns the model for a session; run it with tea.NewProgram or Run.
func New(opts Options) *Model {
	r := opts.Renderer
	if r == nil {
		r = lipgloss.DefaultRenderer()
	}
	m := &Model{opts: opts, st: newStyles(r), width: 80, height: 24, prog: &progress{}, started: time.Now()}
	m.prog.phase.Store("reading")
	return m
}

// Err is the error that ended the session (a trace that could not be
// read), or nil.
func (m *Model) Err() error { return m.err }

// Init starts loading in the background.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.load, tick())
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
	d, err := buildData(t, base)
	if err != nil {
		return loadedMsg{err: err}
	}
	return loadedMsg{d: d, screens: newScreens(d)}
}

// newScreens builds every screen's precomputed state (sorted orders,
// timeline lanes).
func newScreens(d *data) [numScreens]screen {
	return [numScreens]screen{
		scrOverview: newOverview(d),
		scrKernels:  newKernelsScreen(d),
		scrOps:      newOpsScreen(d),
		scrFindings: newFindingsScreen(d),
		scrTimeline: newTimeline(d),
		scrDiff:     newDiffScreen(d),
	}
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
		m.data, m.screens, m.loaded = msg.d, msg.screens, true
		return m, nil
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
		return m, m.key(msg)
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
	k := msg.String()
	if k == "ctrl+c" {
		return tea.Quit
	}
	if !m.loaded {
		if k == "q" || k == "esc" {
			return tea.Quit
		}
		return nil
	}
	if m.editing {
		m.editFilter(msg)
		return nil
	}
	if m.help {
		if k == "q" {
			return tea.Quit
		}
		m.help = false
		return nil
	}
	switch k {
	case "q":
		return tea.Quit
	case "?":
		m.help = true
	case "tab":
		m.cur = (m.cur + 1) % numScreens
	case "shift+tab":
		m.cur = (m.cur + numScreens - 1) % numScreens
	case "1", "2", "3", "4", "5", "6":
		m.cur = int(k[0] - '1')
	case "/":
		if m.screens[m.cur].setFilter(m.filters[m.cur]) {
			m.editing = true
		}
	case "esc":
		if !m.screens[m.cur].back() && m.filters[m.cur] != "" {
			m.filters[m.cur] = ""
			m.screens[m.cur].setFilter("")
		}
	default:
		m.screens[m.cur].handle(m, k)
	}
	return nil
}

// editFilter handles keys while the / prompt is open: the filter applies
// as it is typed; Enter keeps it, Esc clears it.
func (m *Model) editFilter(msg tea.KeyMsg) {
	f := m.filters[m.cur]
	switch msg.Type {
	case tea.KeyEnter:
		m.editing = false
		return
	case tea.KeyEsc:
		m.editing = false
		f = ""
	case tea.KeyBackspace:
		if r := []rune(f); len(r) > 0 {
			f = string(r[:len(r)-1])
		}
	case tea.KeyCtrlU:
		f = ""
	case tea.KeyRunes, tea.KeySpace:
		f += sanitize(string(msg.Runes))
	default:
		return
	}
	m.filters[m.cur] = f
	m.screens[m.cur].setFilter(f)
}

// goTo switches to screen s (used by links between screens).
func (m *Model) goTo(s int) { m.cur = s }

// View draws the whole terminal: tab bar, body, status line.
func (m *Model) View() string {
	w, h := max(m.width, 20), max(m.height, 5)
	if !m.loaded {
		return m.loadingView(w, h)
	}
	lines := make([]string, 0, h)
	lines = append(lines, m.tabBar(w))
	var body []string
	if m.help {
		body = helpLines(w)
	} else {
		body = m.screens[m.cur].render(w, h-2, m.st)
	}
	for i := 0; i < h-2; i++ {
		if i < len(body) {
			lines = append(lines, body[i])
		} else {
			lines = append(lines, "")
		}
	}
	lines = append(lines, m.statusLine(w))
	return strings.Join(lines, "\n")
}

func (m *Model) tabBar(w int) string {
	var b strings.Builder
	used := 0
	for i, t := range screenTitles {
		label := " " + strconv.Itoa(i+1) + " " + t + " "
		if i == m.cur {
			label = "[" + strconv.Itoa(i+1) + " " + t + "]"
		}
		if used+width(label) > w {
			break
		}
		used += width(label)
		if i == m.cur {
			b.WriteString(m.st.tabOn.Render(label))
		} else {
			b.WriteString(m.st.tabOff.Render(label))
		}
	}
	if rest := w - used; rest > 12 {
		b.WriteString(m.st.dim.Render(padLeft(cut(sanitize(m.data.name), rest-1), rest)))
	}
	return b.String()
}

func (m *Model) statusLine(w int) string {
	var left string
	switch {
	case m.editing:
		left = "/" + m.filters[m.cur] + "█  Enter keeps, Esc clears"
	case m.help:
		left = "any key closes help"
	default:
		left = m.screens[m.cur].hint()
		if f := m.filters[m.cur]; f != "" {
			left = "filter \"" + f + "\"  " + left
		}
	}
	right := "? help  q quit"
	pad := w - width(left) - width(right)
	if pad < 1 {
		return m.st.status.Render(fit(left, w))
	}
	return m.st.status.Render(left + strings.Repeat(" ", pad) + right)
}

func (m *Model) loadingView(w, h int) string {
	phase, _ := m.prog.phase.Load().(string)
	read, total := m.prog.read.Load(), m.prog.total.Load()
	elapsed := time.Since(m.started).Truncate(100 * time.Millisecond)
	var line string
	if total > 0 {
		frac := min(float64(read)/float64(total), 1)
		bw := max(min(w-30, 50), 10)
		n := int(frac * float64(bw))
		line = fmt.Sprintf("[%s%s] %3.0f%%  %d/%d MB", strings.Repeat("█", n), strings.Repeat("░", bw-n), frac*100, read>>20, total>>20)
	} else {
		line = fmt.Sprintf("%d MB read", read>>20)
	}
	lines := make([]string, h)
	lines[h/2-1] = cut("  "+phase+" ("+elapsed.String()+")", w)
	lines[h/2] = cut("  "+line, w)
	lines[h-1] = cut("  q quits", w)
	return strings.Join(lines, "\n")
}

// helpLines lists every key; it fits the 22 body lines of an 80×24
// terminal.
func helpLines(w int) []string {
	keys := [][2]string{
		{"Everywhere", ""},
		{"Tab  Shift-Tab  1…6", "switch screen (numbered as in the tab bar)"},
		{"↑ ↓  k j  PgUp PgDn", "move a row / a page"},
		{"g G  Home End", "first / last row"},
		{"mouse wheel", "scroll"},
		{"/", "filter rows: case-insensitive substring; Enter keeps"},
		{"Esc", "close a detail view, else clear the filter"},
		{"s", "sort by the next column"},
		{"?", "this help (any key closes it)"},
		{"q  Ctrl-C", "quit"},
		{"Screens", ""},
		{"Enter", "open the kernel / finding; follow a → kernel link"},
		{"t", "Ops: table / tree (op → child ops → kernels)"},
		{"→ ←  l h", "Ops tree: expand / collapse"},
		{"c", "Diff: kernels / categories"},
		{"Timeline", ""},
		{"← →", "move the cursor (it names the kernel under it)"},
		{"h l  PgUp PgDn", "pan"},
		{"+ -", "zoom in / out around the cursor"},
		{"[ ]  a", "previous / next step, whole trace"},
		{"↑ ↓  k j", "the stream the cursor reads"},
	}
	lines := []string{" Keys"}
	for _, k := range keys {
		if k[1] == "" {
			lines = append(lines, cut("  "+k[0], w))
			continue
		}
		lines = append(lines, cut("    "+fit(k[0], 22)+k[1], w))
	}
	return lines
}

func itoa(n int) string { return strconv.Itoa(n) }

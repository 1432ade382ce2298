package tui

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/tracelens/tracelens/fixtures"
	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
)

// plainRenderer renders no escape sequences, so golden screens are the
// text a user reads (what NO_COLOR gives too).
func plainRenderer() *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	return r
}

func fixtureLoader(name string) Loader {
	return func(progress func(read, total int64)) (*trace.Trace, error) {
		r, err := fixtures.Open(name)
		if err != nil {
			return nil, err
		}
		return ingest.Read(r, name, ingest.Options{Progress: progress})
	}
}

func fixtureOptions(name string) Options {
	return Options{Name: name, Load: fixtureLoader(name), Renderer: plainRenderer()}
}

// keyPress turns a key name as bubbletea spells it into the message a terminal
// would produce.
func keyPress(k string) tea.KeyMsg {
	switch k {
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "tab":
		return tea.KeyMsg{Type: tea.KeyTab}
	case "shift+tab":
		return tea.KeyMsg{Type: tea.KeyShiftTab}
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "left":
		return tea.KeyMsg{Type: tea.KeyLeft}
	case "right":
		return tea.KeyMsg{Type: tea.KeyRight}
	case "pgdown":
		return tea.KeyMsg{Type: tea.KeyPgDown}
	case "pgup":
		return tea.KeyMsg{Type: tea.KeyPgUp}
	case "backspace":
		return tea.KeyMsg{Type: tea.KeyBackspace}
	case "ctrl+c":
		return tea.KeyMsg{Type: tea.KeyCtrlC}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

// screenAfter runs the program on a fixture in a w×h terminal with
// teatest, waits for the trace to load, presses keys and returns the final
// screen.
func screenAfter(t *testing.T, opts Options, w, h int, keys ...string) string {
	t.Helper()
	tm := teatest.NewTestModel(t, New(opts), teatest.WithInitialTermSize(w, h))
	// A single trace opens on the overview, a diff on the diff, a run on
	// its ranks.
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte("[1 Overview]")) || bytes.Contains(b, []byte("[6 Diff]")) || bytes.Contains(b, []byte("[7 Ranks]"))
	},
		teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	for _, k := range keys {
		tm.Send(keyPress(k))
	}
	// Ctrl-C, not q: q closes help rather than quitting.
	tm.Send(keyPress("ctrl+c"))
	m := tm.FinalModel(t, teatest.WithFinalTimeout(20*time.Second)).(*Model)
	if m.Err() != nil {
		t.Fatal(m.Err())
	}
	return m.View()
}

// checkScreen asserts the invariants of every frame: exactly h lines, none
// wider than w, no escape sequence (the renderer is plain).
func checkScreen(t *testing.T, view string, w, h int) {
	t.Helper()
	lines := strings.Split(view, "\n")
	if len(lines) != h {
		t.Errorf("screen has %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if n := width(l); n > w {
			t.Errorf("line %d is %d cells wide, more than %d: %q", i+1, n, w, l)
		}
	}
	if strings.ContainsAny(view, "\x1b\x07") {
		t.Errorf("screen contains an escape sequence")
	}
}

// TestGoldenScreens renders each screen on real traces and compares it
// with testdata/TestGoldenScreens/NAME.golden (go test -update rewrites).
func TestGoldenScreens(t *testing.T) {
	hooks := fixtureOptions("eggroll_hooks.json.gz")
	diffOpts := fixtureOptions("eggroll_direct.json.gz")
	diffOpts.BaseName, diffOpts.LoadBase = "eggroll_hooks.json.gz", fixtureLoader("eggroll_hooks.json.gz")
	cases := []struct {
		name string
		opts Options
		w, h int
		keys []string
	}{
		{"overview_80x24", hooks, 80, 24, nil},
		{"kernels_80x24", hooks, 80, 24, []string{"2"}},
		{"kernels_120x40", hooks, 120, 40, []string{"tab"}},
		{"kernels_filter_sort", hooks, 120, 40, []string{"2", "/", "M", "U", "L", "enter", "s", "s"}},
		{"kernel_detail", hooks, 120, 40, []string{"2", "enter"}},
		{"ops_120x40", hooks, 120, 40, []string{"3"}},
		{"ops_tree", hooks, 120, 40, []string{"3", "t", "down", "right"}},
		// Enter opens an op's detail: from the table, from a tree node,
		// from a kernel leaf (its op's, on the kernel's line).
		{"op_detail", hooks, 120, 40, []string{"3", "enter"}},
		{"op_detail_tree_leaf", hooks, 120, 40, []string{"3", "t", "down", "right", "down", "right", "down", "down", "enter"}},
		{"findings_120x40", hooks, 120, 40, []string{"4"}},
		{"finding_detail", hooks, 120, 40, []string{"4", "enter"}},
		{"finding_link_to_kernel", hooks, 120, 40, []string{"4", "/", "t", "f", "3", "2", "enter", "enter", "enter"}},
		{"timeline_whole", hooks, 120, 40, []string{"5"}},
		{"timeline_step_zoom", hooks, 120, 40, []string{"5", "]", "]", "right", "right", "right", "right", "+", "right", "right"}},
		{"timeline_80x24", fixtureOptions("fusedlinear_cublas.json.gz"), 80, 24, []string{"5", "l", "+", "+"}},
		{"diff_120x40", diffOpts, 120, 40, []string{"6"}},
		{"diff_categories_80x24", diffOpts, 80, 24, []string{"6", "c"}},
		{"diff_single_trace", hooks, 80, 24, []string{"6"}},
		{"help_80x24", hooks, 80, 24, []string{"?"}},
		{"jax_overview", fixtureOptions("jax_eggroll.perfetto.json.gz"), 100, 30, nil},
		// tui BASE NEW opens on the diff.
		{"diff_first_frame", diffOpts, 120, 40, nil},
		// Host threads (main and autograd), Python, steps and ranges.
		{"timeline_host_lanes", recordedOptions("train_sync_pageable.json.gz"), 120, 40, []string{"5", "]", "]"}},
		// The gpu-idle finding opens on its first gap; Enter shows it.
		{"finding_gap_to_timeline", recordedOptions("train_sync_pageable.json.gz"), 120, 40, []string{"enter", "enter"}},
		{"finding_chain_to_timeline", recordedOptions("sincos_eager.json.gz"), 120, 40, []string{"enter", "enter"}},
		{"overview_light_steps", recordedOptions("transformer_naive_attn.json.gz"), 120, 40, nil},
		// tui DIR opens on the ranks of the run, showing the straggler.
		{"ranks_host_straggler", runOptions("ddp_host_straggler"), 120, 40, nil},
		{"ranks_two_groups_80x24", runOptions("two_groups"), 80, 24, nil},
		// ↓ past the last rank reaches the run's findings; Enter opens one.
		{"run_finding_detail", runOptions("two_groups"), 120, 40, []string{"down", "down", "enter"}},
		{"kernels_reversed", hooks, 120, 40, []string{"2", "S"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			view := screenAfter(t, c.opts, c.w, c.h, c.keys...)
			checkScreen(t, view, c.w, c.h)
			golden.RequireEqual(t, []byte(view))
		})
	}
}

// loaded returns a model with the fixture loaded synchronously, sized w×h.
func loaded(t testing.TB, opts Options, w, h int) *Model {
	t.Helper()
	m := New(opts)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	msg := m.load()
	if lm := msg.(loadedMsg); lm.err != nil {
		t.Fatal(lm.err)
	}
	m.Update(msg)
	return m
}

func press(m *Model, keys ...string) tea.Cmd {
	var cmd tea.Cmd
	for _, k := range keys {
		_, cmd = m.Update(keyPress(k))
	}
	return cmd
}

func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

func TestQuitKeys(t *testing.T) {
	m := loaded(t, fixtureOptions("fusedlinear_naive.json.gz"), 80, 24)
	if !isQuit(press(m, "q")) {
		t.Error("q does not quit")
	}
	if !isQuit(press(m, "ctrl+c")) {
		t.Error("Ctrl-C does not quit")
	}
	// While typing a filter, q is a letter; Ctrl-C still quits.
	press(m, "2", "/")
	if isQuit(press(m, "q")) {
		t.Error("q quits while typing a filter")
	}
	if m.filters[scrKernels] != "q" {
		t.Errorf("filter = %q, want \"q\"", m.filters[scrKernels])
	}
	if !isQuit(press(m, "ctrl+c")) {
		t.Error("Ctrl-C does not quit while typing a filter")
	}
}

// TestTypedAheadKeys: keys typed faster than the terminal is read reach
// the model as one message; each must act as if typed alone.
func TestTypedAheadKeys(t *testing.T) {
	m := loaded(t, fixtureOptions("eggroll_hooks.json.gz"), 120, 40)
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("3/mul")})
	if m.cur != scrOps || !m.editing || m.filters[scrOps] != "mul" {
		t.Errorf("after \"3/mul\": screen %d, editing %v, filter %q; want ops, editing, \"mul\"", m.cur, m.editing, m.filters[scrOps])
	}
	m.Update(keyPress("esc"))
	if _, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jjq")}); !isQuit(cmd) {
		t.Error("\"jjq\" does not quit")
	}
}

func TestFilterIsCaseInsensitiveAndEscClears(t *testing.T) {
	m := loaded(t, fixtureOptions("eggroll_hooks.json.gz"), 120, 40)
	ks := m.screens[scrKernels].(*kernelsScreen)
	all := len(ks.tbl.view)
	press(m, "2", "/", "m", "U", "l", "f", "u", "n", "c", "t", "o", "r", "enter")
	if got := len(ks.tbl.view); got != 2 {
		t.Fatalf("filter mulfunctor shows %d kernels, want the 2 MulFunctor kernels", got)
	}
	for _, r := range ks.tbl.view {
		if !strings.Contains(ks.d.kernels[r].full, "MulFunctor") {
			t.Errorf("filter kept %s", ks.d.kernels[r].short)
		}
	}
	press(m, "esc")
	if len(ks.tbl.view) != all || m.filters[scrKernels] != "" {
		t.Errorf("Esc left %d of %d rows, filter %q", len(ks.tbl.view), all, m.filters[scrKernels])
	}
}

func TestSortCyclesColumns(t *testing.T) {
	m := loaded(t, fixtureOptions("eggroll_hooks.json.gz"), 120, 40)
	ks := m.screens[scrKernels].(*kernelsScreen)
	press(m, "2")
	if ks.tbl.sortName() != "total" {
		t.Fatalf("initial sort %q, want total", ks.tbl.sortName())
	}
	press(m, "s")
	if ks.tbl.sortName() != "mean" {
		t.Fatalf("after s, sort %q, want mean", ks.tbl.sortName())
	}
	prev := -1.0
	for i, r := range ks.tbl.view {
		mean := ks.d.kernels[r].MeanUs
		if i > 0 && mean > prev {
			t.Fatalf("row %d mean %v after %v: not descending", i, mean, prev)
		}
		prev = mean
	}
	seen := map[string]bool{}
	for range ks.tbl.cols {
		seen[ks.tbl.sortName()] = true
		press(m, "s")
	}
	if len(seen) != len(ks.tbl.cols) {
		t.Errorf("s visits %d sort columns, want all %d: %v", len(seen), len(ks.tbl.cols), seen)
	}
}

func TestMovementKeys(t *testing.T) {
	m := loaded(t, fixtureOptions("eggroll_hooks.json.gz"), 80, 12)
	press(m, "2")
	m.View()
	tbl := m.screens[scrKernels].(*kernelsScreen).tbl
	steps := []struct {
		key  string
		want int
	}{
		{"j", 1}, {"down", 2}, {"k", 1}, {"up", 0}, {"up", 0},
		{"G", len(tbl.view) - 1}, {"g", 0}, {"pgdown", tbl.height - 1}, {"pgup", 0},
	}
	for _, s := range steps {
		press(m, s.key)
		if tbl.cursor != s.want {
			t.Errorf("after %s cursor = %d, want %d", s.key, tbl.cursor, s.want)
		}
	}
	m.Update(tea.MouseMsg{Action: tea.MouseActionPress, Button: tea.MouseButtonWheelDown})
	if tbl.cursor != 3 {
		t.Errorf("wheel down: cursor = %d, want 3", tbl.cursor)
	}
	m.Update(tea.MouseMsg{Action: tea.MouseActionPress, Button: tea.MouseButtonWheelUp})
	if tbl.cursor != 0 {
		t.Errorf("wheel up: cursor = %d, want 0", tbl.cursor)
	}
	for i, want := range []int{scrOps, scrFindings, scrTimeline, scrDiff, scrRanks, scrOverview} {
		press(m, "tab")
		if m.cur != want {
			t.Errorf("tab %d: screen %d, want %d", i+1, m.cur, want)
		}
	}
	press(m, "shift+tab")
	if m.cur != scrRanks {
		t.Errorf("shift+tab from overview: screen %d, want ranks", m.cur)
	}
}

// TestResizeReflows checks every screen at sizes from tiny to wide: the
// frame always fills the terminal exactly.
func TestResizeReflows(t *testing.T) {
	m := loaded(t, fixtureOptions("eggroll_hooks.json.gz"), 120, 40)
	for _, sz := range [][2]int{{80, 24}, {40, 10}, {200, 60}, {81, 25}} {
		m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		for s := 0; s < numScreens; s++ {
			press(m, itoa(s+1))
			checkScreen(t, m.View(), sz[0], sz[1])
			press(m, "enter")
			checkScreen(t, m.View(), sz[0], sz[1])
			press(m, "esc")
		}
		press(m, "?")
		checkScreen(t, m.View(), sz[0], sz[1])
		press(m, "?")
	}
}

// TestFindingLinksToKernel follows the first kernel link of the first
// finding to its detail on screen 2.
func TestFindingLinksToKernel(t *testing.T) {
	m := loaded(t, fixtureOptions("eggroll_hooks.json.gz"), 120, 40)
	press(m, "4")
	m.View()
	fs := m.screens[scrFindings].(*findingsScreen)
	// Open the first finding whose evidence names kernels (tf32-disabled
	// on this trace): the cursor starts on its first link.
	var i int
	for n := range fs.d.res.Findings {
		press(m, "enter")
		var ok bool
		if i, ok = fs.detail.selected(); ok && fs.lines.links[i].kernel >= 0 {
			break
		}
		if n == len(fs.d.res.Findings)-1 {
			t.Fatal("no finding links a kernel")
		}
		press(m, "esc", "down")
	}
	want := fs.d.kernels[fs.lines.links[i].kernel].full
	press(m, "enter")
	if m.cur != scrKernels {
		t.Fatalf("Enter on a link left screen %d", m.cur)
	}
	if !strings.Contains(m.View(), want[:40]) {
		t.Errorf("kernel screen does not show the linked kernel %q", want)
	}
}

func TestLoadErrorEndsSession(t *testing.T) {
	m := New(Options{Name: "x", Load: func(func(int64, int64)) (*trace.Trace, error) { return nil, errors.New("x: not a trace") }})
	_, cmd := m.Update(m.load())
	if !isQuit(cmd) || m.Err() == nil || m.Err().Error() != "x: not a trace" {
		t.Errorf("load error: quit=%v err=%v", isQuit(cmd), m.Err())
	}
}

func TestLoadingShowsProgress(t *testing.T) {
	m := New(Options{Name: "big.json", Renderer: plainRenderer()})
	m.prog.phase.Store("reading big.json")
	m.prog.read.Store(210 << 20)
	m.prog.total.Store(512 << 20)
	v := m.View()
	for _, want := range []string{"reading big.json", "█░", " 41%", "210/512 MB"} {
		if !strings.Contains(v, want) {
			t.Errorf("loading screen lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "\x1b") {
		t.Errorf("loading screen has escapes on a plain renderer:\n%q", v)
	}
}

// TestHostileNamesAreSanitized puts terminal escape sequences and bidi
// overrides into kernel and op names: none may reach the screen.
func TestHostileNamesAreSanitized(t *testing.T) {
	evil := "evil\x1b]0;pwned\x07\x1b[2J\u202ekernel\x9b31m"
	tr := syntheticTrace(3, 2)
	tr.GPU[0].Name = evil
	tr.GPU[1].Name = evil
	tr.Ops[0].Name = evil
	opts := Options{Name: "synthetic", Load: func(func(int64, int64)) (*trace.Trace, error) { return tr, nil }, Renderer: plainRenderer()}
	m := loaded(t, opts, 120, 40)
	for s := 0; s < numScreens; s++ {
		press(m, itoa(s+1))
		for _, v := range []string{m.View(), func() string { press(m, "enter"); return m.View() }()} {
			if strings.ContainsAny(v, "\x1b\x07\u202e\u009b") {
				t.Errorf("screen %d shows a raw control character: %q", s+1, v)
			}
		}
		press(m, "esc")
	}
	press(m, "2")
	if !strings.Contains(m.View(), "evil␛]0;pwned␇␛[2J\uFFFDkernel\uFFFD31m") {
		t.Errorf("sanitised kernel name not shown:\n%s", m.View())
	}
}

func TestSanitize(t *testing.T) {
	cases := map[string]string{
		"aten::mm":      "aten::mm",
		"a\x1b[31mb":    "a␛[31mb",
		"tab\there\nnl": "tab␉here␊nl",
		"bad\xffutf8":   "bad\uFFFDutf8",
		"c1\u009b2J":    "c1\uFFFD2J",
		"rtl\u202eevil": "rtl\uFFFDevil",
		"µs ✓ 日本":       "µs ✓ 日本",
		"bell\a":        "bell␇",
	}
	for in, want := range cases {
		if got := sanitize(in); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFit(t *testing.T) {
	cases := []struct {
		in   string
		w    int
		want string
	}{
		{"abc", 5, "abc  "},
		{"abcdefghijkl", 9, "abcd…ijkl"},
		{"日本語のカーネル名", 9, "日本…ル名"},
		{"abc", 0, ""},
	}
	for _, c := range cases {
		got := fit(c.in, c.w)
		if got != c.want || width(got) != c.w {
			t.Errorf("fit(%q, %d) = %q (%d cells), want %q", c.in, c.w, got, width(got), c.want)
		}
	}
}

// TestHelpListsEveryBinding: the help screen is drawn from the key map, so
// every binding the code matches must appear on it, within 80×24.
func TestHelpListsEveryBinding(t *testing.T) {
	m := loaded(t, fixtureOptions("eggroll_hooks.json.gz"), 80, 24)
	press(m, "?")
	screen := m.View()
	lines := strings.Split(screen, "\n")
	if len(lines) != 24 {
		t.Fatalf("help screen has %d lines, want 24", len(lines))
	}
	for i, l := range lines {
		if w := width(l); w > 80 {
			t.Errorf("help line %d is %d cells wide: %q", i, w, l)
		}
	}
	n := 0
	for _, s := range m.keys.helpSections(&m.input) {
		for _, col := range s.columns {
			for _, b := range col {
				n++
				h := b.Help()
				if !strings.Contains(screen, h.Key+" ") || !strings.Contains(screen, h.Desc) {
					t.Errorf("help does not show %q %q:\n%s", h.Key, h.Desc, screen)
				}
			}
		}
	}
	// One more than the key map: the prompt's ctrl+u is textinput's own.
	if want := reflect.TypeFor[keyMap]().NumField() + 1; n != want {
		t.Errorf("help sections hold %d bindings, want every one of the key map's %d", n, want)
	}
}

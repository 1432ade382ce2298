package tui

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBackStackReturnsExactly follows a finding's kernel link from a
// scrolled, filtered, sorted place and checks that Esc returns there
// exactly, then that Esc with an empty stack closes the detail as before.
func TestBackStackReturnsExactly(t *testing.T) {
	m := loaded(t, fixtureOptions("eggroll_hooks.json.gz"), 120, 40)
	// The Kernels screen in a state of its own: sorted by mean, reversed,
	// filtered, cursor on row 2.
	press(m, "2", "s", "S", "/", "e", "l", "e", "m", "enter", "down", "down")
	ks := m.screens[scrKernels].(*kernelsScreen)
	kernelsBefore := *ks.tbl
	press(m, "4")
	m.View()
	fs := m.screens[scrFindings].(*findingsScreen)
	// Open the first finding whose detail starts on a kernel link.
	for n := range fs.d.res.Findings {
		press(m, "enter")
		if i, ok := fs.lines.selected(fs.detail); ok && fs.lines.links[i].kernel >= 0 {
			break
		}
		if n == len(fs.d.res.Findings)-1 {
			t.Fatal("no finding links a kernel")
		}
		press(m, "esc", "down")
	}
	press(m, "down", "up") // move and come back: the cursor is part of the place
	cursor := fs.detail.cursor
	press(m, "enter")
	if m.cur != scrKernels || ks.detail == nil || m.filters[scrKernels] != "" {
		t.Fatalf("the link did not open the kernel: screen %d, detail %v, filter %q", m.cur+1, ks.detail != nil, m.filters[scrKernels])
	}
	if v := m.View(); !strings.Contains(v, "esc ← Findings") {
		t.Errorf("the status line does not say where Esc returns:\n%s", v)
	}
	press(m, "esc")
	if m.cur != scrFindings || fs.detail == nil || fs.detail.cursor != cursor {
		t.Fatalf("Esc did not return to the finding's detail on its line: screen %d, detail %v", m.cur+1, fs.detail != nil)
	}
	// The kernels screen the link changed is back as it was too.
	if m.filters[scrKernels] != "elem" || ks.detail != nil || ks.tbl.cursor != kernelsBefore.cursor ||
		ks.tbl.sortCol != kernelsBefore.sortCol || !ks.tbl.reverse || len(ks.tbl.view) != len(kernelsBefore.view) {
		t.Errorf("the Kernels screen was not restored: filter %q, cursor %d (want %d), sort %d reverse %v",
			m.filters[scrKernels], ks.tbl.cursor, kernelsBefore.cursor, ks.tbl.sortCol, ks.tbl.reverse)
	}
	// The stack is empty: Esc closes the detail, as it always did.
	press(m, "esc")
	if fs.detail != nil || m.cur != scrFindings {
		t.Errorf("Esc with an empty stack did not close the finding")
	}
}

// TestBackStackTimelineWindow: Enter on a kernel of the zoomed timeline
// and Esc bring back the same window, cursor and lane; switching screens
// by number leaves the trail.
func TestBackStackTimelineWindow(t *testing.T) {
	m := loaded(t, fixtureOptions("eggroll_hooks.json.gz"), 120, 40)
	press(m, "5")
	m.View()
	ts := m.screens[scrTimeline].(*timelineScreen)
	press(m, "]", "+", "+")
	m.View()
	// Find a column on a kernel.
	for c := 0; c < ts.cols; c++ {
		ts.cur = c
		if l, i := ts.underCursor(); i >= 0 && l.kind == laneGPU {
			break
		}
	}
	win, cur, step := ts.win, ts.cur, ts.step
	press(m, "enter")
	if m.cur != scrKernels {
		t.Fatalf("Enter on a kernel left screen %d", m.cur+1)
	}
	press(m, "esc")
	if m.cur != scrTimeline || ts.win != win || ts.cur != cur || ts.step != step {
		t.Errorf("Esc returned to screen %d, window %v cursor %d step %d; want the timeline, %v %d %d", m.cur+1, ts.win, ts.cur, ts.step, win, cur, step)
	}
	press(m, "enter", "3")
	if len(m.stack) != 0 {
		t.Errorf("switching screens kept %d places on the stack", len(m.stack))
	}
}

// TestOpDetail: Enter on an op of the table opens its detail with its
// callers, shapes, Python lines and kernels; Enter on a kernel line
// follows it; Esc comes back; a kernel leaf of the tree opens its op's
// detail on the kernel's line.
func TestOpDetail(t *testing.T) {
	m := loaded(t, fixtureOptions("eggroll_hooks.json.gz"), 120, 40)
	os := m.screens[scrOps].(*opsScreen)
	press(m, "3")
	row := -1
	for i, o := range m.data.res.Ops {
		if o.Name == "aten::addmm" {
			row = i
		}
	}
	os.flat.selectRow(row)
	press(m, "enter")
	v := m.View()
	for _, want := range []string{"aten::addmm", "calls 15", "Called from", "15× aten::linear", "Input shapes", "[[256], [2048, 256], [256, 256], [], []]",
		"Python lines", "capture_traces.py(90): batched_forward_hooks", "Kernels", "sm80_xmma_gemm"} {
		if !strings.Contains(v, want) {
			t.Errorf("op detail lacks %q:\n%s", want, v)
		}
	}
	// The kernels listed sum to analyze's GPU total of the op.
	var count int
	for i, l := range os.detail.lines.links {
		if l.kernel >= 0 {
			f := strings.Fields(os.detail.lines.lines[i])
			n := 0
			for _, c := range f[1] {
				n = n*10 + int(c-'0')
			}
			count += n
		}
	}
	if count != m.data.res.Ops[row].Kernels {
		t.Errorf("the op detail lists %d kernel launches, analyze counts %d", count, m.data.res.Ops[row].Kernels)
	}
	// Follow the caller link: aten::linear's detail, then back.
	for i, l := range os.detail.lines.links {
		if l.op == "aten::linear" {
			os.detail.view.selectRow(i)
		}
	}
	press(m, "enter")
	if os.detail == nil || os.detail.name != "aten::linear" {
		t.Fatalf("the caller link did not open aten::linear")
	}
	press(m, "esc")
	if os.detail == nil || os.detail.name != "aten::addmm" {
		t.Fatalf("Esc did not return to aten::addmm's detail")
	}
	press(m, "G", "enter")
	if m.cur != scrKernels || !strings.Contains(m.View(), "sm80_xmma_gemm") {
		t.Fatalf("Enter on the last kernel line did not open the kernel")
	}
	press(m, "esc", "esc")
	if m.cur != scrOps || os.detail != nil {
		t.Fatalf("Esc, Esc did not come back to the Ops table")
	}
	// A kernel leaf of the tree.
	press(m, "t")
	for n := range m.data.tree.nodes {
		if nd := &m.data.tree.nodes[n]; nd.kernel && m.data.tree.nodes[nd.parent].name == "aten::addmm" {
			os.openNode(int32(n))
			break
		}
	}
	i, ok := os.detail.lines.selected(os.detail.view)
	if os.detail.name != "aten::addmm" || !ok || os.detail.lines.links[i].kernel < 0 {
		t.Errorf("a kernel leaf opens %q on line %d, want aten::addmm on the kernel's line", os.detail.name, i)
	}
}

// TestTimelineOpensOpDetail: Enter on an op of the timeline opens the
// op's detail, and Esc returns to the timeline.
func TestTimelineOpensOpDetail(t *testing.T) {
	m := loaded(t, fixtureOptions("eggroll_hooks.json.gz"), 120, 40)
	press(m, "5")
	m.View()
	ts := m.screens[scrTimeline].(*timelineScreen)
	for li, l := range ts.shown {
		if ts.lanes[l].kind == laneOps {
			ts.lane = li
		}
	}
	for c := 0; c < ts.cols; c++ {
		if ts.cur = c; func() bool { _, i := ts.underCursor(); return i >= 0 }() {
			break
		}
	}
	press(m, "enter")
	if os := m.screens[scrOps].(*opsScreen); m.cur != scrOps || os.detail == nil {
		t.Fatalf("Enter on an op left screen %d without its detail", m.cur+1)
	}
	press(m, "esc")
	if m.cur != scrTimeline {
		t.Errorf("Esc returned to screen %d, want the timeline", m.cur+1)
	}
}

// TestRunFindingOpens: on a run's Ranks screen, ↓ past the ranks reaches
// the run's findings and Enter opens one.
func TestRunFindingOpens(t *testing.T) {
	m := loadedRun(t, runOptions("two_groups"), 120, 40)
	rs := m.screens[scrRanks].(*ranksScreen)
	press(m, "G", "down")
	if !rs.focus {
		t.Fatal("↓ on the last rank does not reach the run's findings")
	}
	press(m, "down", "enter")
	v := m.View()
	if rs.detail == nil || !strings.Contains(v, "RUN FINDING 2 OF 2") || !strings.Contains(v, "TP communication") || !strings.Contains(v, "Fix") {
		t.Fatalf("Enter does not open the second run finding:\n%s", v)
	}
	press(m, "esc")
	if rs.detail != nil || !rs.focus {
		t.Errorf("Esc does not close the run finding")
	}
	press(m, "up", "up")
	if rs.focus {
		t.Errorf("↑ on the first finding does not return to the ranks")
	}
	press(m, "G", "down", "esc")
	if rs.focus {
		t.Errorf("Esc in the findings list does not return to the ranks")
	}
}

// TestReverseSort: S flips the sort column's direction and the header's
// arrow; s starts the next column in its own direction.
func TestReverseSort(t *testing.T) {
	m := loaded(t, fixtureOptions("eggroll_hooks.json.gz"), 120, 40)
	ks := m.screens[scrKernels].(*kernelsScreen)
	press(m, "2")
	if !strings.Contains(m.View(), "TOTAL▼") {
		t.Fatalf("the sort column's header has no ▼:\n%s", m.View())
	}
	press(m, "S")
	prev := -1.0
	for i, r := range ks.tbl.view {
		if tot := ks.d.kernels[r].TotalUs; i > 0 && tot < prev {
			t.Fatalf("after S, row %d total %v after %v: not ascending", i, tot, prev)
		}
		prev = ks.d.kernels[ks.tbl.view[i]].TotalUs
	}
	if !strings.Contains(m.View(), "TOTAL▲") {
		t.Errorf("after S the header has no ▲:\n%s", m.View())
	}
	press(m, "S")
	if ks.tbl.reverse || !strings.Contains(m.View(), "TOTAL▼") {
		t.Errorf("S twice is not the original order")
	}
	// Names ascend by default: ▲.
	ks.tbl.sortCol = 0
	ks.tbl.refresh()
	if !strings.Contains(m.View(), "KERNEL▲") {
		t.Errorf("the name column's header has no ▲:\n%s", m.View())
	}
}

// TestRegexFilter: the / prompt takes a Go regexp; an invalid one shows
// its error in the prompt line and keeps the last valid filter; a plain
// substring with no regexp operator matches as before.
func TestRegexFilter(t *testing.T) {
	m := loaded(t, fixtureOptions("eggroll_hooks.json.gz"), 120, 40)
	ks := m.screens[scrKernels].(*kernelsScreen)
	press(m, "2", "/")
	for _, r := range "^gem(mk1|v2T)" {
		press(m, string(r))
	}
	if len(ks.tbl.view) != 2 || m.filterErr != nil {
		t.Fatalf("regexp ^gem(mk1|v2T) keeps %d kernels (error %v), want 2", len(ks.tbl.view), m.filterErr)
	}
	press(m, "(")
	v := m.View()
	last := v[strings.LastIndex(v, "\n")+1:]
	if m.filterErr == nil || !strings.Contains(last, "missing closing )") || !strings.Contains(last, `filter "^gem(mk1|v2T)" kept`) {
		t.Fatalf("an invalid regexp does not say so in the prompt line: %q", last)
	}
	if m.filters[scrKernels] != "^gem(mk1|v2T)" || len(ks.tbl.view) != 2 {
		t.Errorf("an invalid regexp changed the filter to %q (%d rows)", m.filters[scrKernels], len(ks.tbl.view))
	}
	press(m, "enter")
	if !m.editing {
		t.Errorf("Enter accepted an invalid regexp")
	}
	press(m, "backspace", "enter")
	if m.editing || m.filters[scrKernels] != "^gem(mk1|v2T)" {
		t.Errorf("after fixing the text: editing %v, filter %q", m.editing, m.filters[scrKernels])
	}
	// A substring.
	press(m, "esc", "/", "M", "u", "l", "F", "enter")
	if len(ks.tbl.view) != 2 {
		t.Errorf("substring MulF keeps %d kernels, want 2", len(ks.tbl.view))
	}
}

// TestCopyOSC52: y puts the selected kernel's full name on the clipboard
// with OSC 52 in the frame bubbletea writes, and the status line says
// so; Y copies the row; the sequence leaves the frames afterwards.
func TestCopyOSC52(t *testing.T) {
	m := loaded(t, fixtureOptions("eggroll_hooks.json.gz"), 120, 40)
	ks := m.screens[scrKernels].(*kernelsScreen)
	press(m, "2")
	r, _ := ks.tbl.selected()
	cmd := press(m, "y")
	full := ks.d.kernels[r].full
	want := "\x1b]52;c;" + b64(full) + "\x07"
	v := m.View()
	if !strings.Contains(v, want) {
		t.Fatalf("the frame does not carry OSC 52 with %q", full)
	}
	if !strings.Contains(v, "copied the name: ") {
		t.Errorf("the status line does not say copied:\n%s", v)
	}
	if cmd == nil {
		t.Fatal("y returns no command to end the sequence")
	}
	m.Update(cmd())
	if strings.Contains(m.View(), "\x1b]52") {
		t.Errorf("the sequence stays in the frames")
	}
	press(m, "Y")
	if got := copied(t, m.View()); !strings.HasPrefix(got, ks.tbl.cell(r, 0)+"\t"+ks.tbl.cell(r, 1)+"\t") {
		t.Errorf("Y copies %q, want the row's cells, tab-separated", got)
	}
	press(m, "j")
	if strings.Contains(m.View(), "copied") {
		t.Errorf("the copied message outlives the next key")
	}
}

// TestEditSource: e runs $EDITOR +LINE FILE on the op detail's Python
// line, says so when $EDITOR is unset, and when there is no line.
func TestEditSource(t *testing.T) {
	m := loaded(t, fixtureOptions("eggroll_hooks.json.gz"), 120, 40)
	press(m, "3", "enter")
	os := m.screens[scrOps].(*opsScreen)
	line := os.detail.sourceLine()
	if line == "" {
		t.Fatal("the op detail has no Python line")
	}
	t.Setenv("EDITOR", "")
	press(m, "e")
	if !strings.Contains(m.View(), "set $EDITOR to open capture_traces.py:") {
		t.Errorf("e without $EDITOR:\n%s", m.View())
	}
	// The trace's file is not on this machine: the message says so.
	t.Setenv("EDITOR", "true")
	press(m, "e")
	if !strings.Contains(m.View(), "capture_traces.py is not on this machine") {
		t.Errorf("e on a file that is not here:\n%s", m.View())
	}
	// A file that is: e hands the terminal to $EDITOR +LINE FILE.
	dir := t.TempDir()
	file := filepath.Join(dir, "model.py")
	if err := osWrite(file); err != nil {
		t.Fatal(err)
	}
	os.detail.lines.src[len(os.detail.lines.src)-1] = file + "(42): forward"
	for i := range os.detail.lines.src {
		if i != len(os.detail.lines.src)-1 {
			os.detail.lines.src[i] = ""
		}
	}
	record := filepath.Join(dir, "args")
	script := filepath.Join(dir, "ed.sh")
	if err := writeExec(script, "#!/bin/sh\necho \"$@\" > '"+record+"'\n"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("EDITOR", script)
	if cmd := press(m, "e"); cmd == nil || m.flash != "" {
		t.Fatalf("e with $EDITOR set runs nothing (%q)", m.flash)
	}
	// What bubbletea's ExecProcess runs.
	ed, why := editorCommand(os.sourceLine())
	if ed == nil {
		t.Fatal(why)
	}
	if out, err := ed.CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	if b, _ := readFile(record); strings.TrimSpace(b) != "+42 "+file {
		t.Errorf("the editor got %q, want +42 %s", b, file)
	}
	// On the Ops table, e reads the selected op's line without opening it.
	press(m, "esc")
	if got := os.sourceLine(); got != line {
		t.Errorf("the Ops table's first op reads source line %q, its detail %q", got, line)
	}
	// No source line: the overview's findings have none.
	press(m, "1", "e")
	if !strings.Contains(m.View(), "no source line for the selected item") {
		t.Errorf("e with no source line:\n%s", m.View())
	}
}

// TestHelpClosesOnQ: help says any key closes it, q included.
func TestHelpClosesOnQ(t *testing.T) {
	m := loaded(t, fixtureOptions("eggroll_hooks.json.gz"), 80, 24)
	press(m, "?")
	if cmd := press(m, "q"); isQuit(cmd) || m.help {
		t.Errorf("q in help: quit %v, help still open %v", isQuit(cmd), m.help)
	}
	if !isQuit(press(m, "q")) {
		t.Errorf("q after help does not quit")
	}
}

func osWrite(path string) error { return os.WriteFile(path, []byte("x = 1\n"), 0o644) }

func writeExec(path, text string) error { return os.WriteFile(path, []byte(text), 0o755) }

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// copied decodes the OSC 52 payload a frame carries.
func copied(t *testing.T, frame string) string {
	t.Helper()
	_, rest, ok := strings.Cut(frame, "\x1b]52;c;")
	if !ok {
		t.Fatal("the frame carries no OSC 52")
	}
	payload, _, _ := strings.Cut(rest, "\x07")
	b, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

package tui

import (
	"os"
	"os/exec"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/tracelens/tracelens/trace"
)

// selector is a screen with something selected that y and Y copy.
type selector interface {
	// selection returns the selected item's name (its full name, a
	// kernel's templated C++ one) or, with row, its whole row, cells
	// separated by tabs; false when nothing is selected.
	selection(row bool) (string, bool)
}

// sourcer is a screen whose selected item may have a Python source line.
type sourcer interface {
	// sourceLine returns the selected item's source line as the trace
	// names it ("model.py(42): forward"), or "".
	sourceLine() string
}

// oscClearMsg ends the frames' carrying of clipboard sequence number n.
type oscClearMsg int

// oscHold is how long frames carry a clipboard sequence: bubbletea
// draws at most one frame per tick, so the frame right after the key may
// be replaced by the next one before it is written.
const oscHold = 250 * time.Millisecond

// maxCopy bounds what is copied: terminals drop longer OSC 52 payloads.
const maxCopy = 64 << 10

// copySelection puts the selected name (or row) on the clipboard with
// OSC 52, which reaches the terminal's clipboard over ssh and through
// tmux: the sequence rides on the frames bubbletea writes.
func (m *Model) copySelection(row bool) tea.Cmd {
	sel, ok := m.screens[m.cur].(selector)
	if !ok {
		m.flash = "nothing to copy on this screen"
		return nil
	}
	text, ok := sel.selection(row)
	if !ok || text == "" {
		m.flash = "nothing selected to copy"
		return nil
	}
	if len(text) > maxCopy {
		m.flash = "too long to copy (" + itoa(len(text)) + " bytes)"
		return nil
	}
	// Only what was shown is copied: sanitised text, no control bytes.
	m.osc = ansi.SetSystemClipboard(text)
	m.oscSeq++
	what := "name"
	if row {
		what = "row"
	}
	m.flash = "copied the " + what + ": " + strings.ReplaceAll(text, "\t", "  ")
	n := m.oscSeq
	return tea.Tick(oscHold, func(time.Time) tea.Msg { return oscClearMsg(n) })
}

// editorDoneMsg reports how $EDITOR ended.
type editorDoneMsg struct {
	file string
	err  error
}

func (e editorDoneMsg) text() string {
	if e.err != nil {
		return "$EDITOR on " + sanitize(e.file) + ": " + sanitize(e.err.Error())
	}
	return ""
}

// editSource opens the selected item's source line in $EDITOR (as
// $EDITOR +LINE FILE, which vi, vim, nano, emacs and micro take),
// handing it the terminal until it exits.
func (m *Model) editSource() tea.Cmd {
	line := ""
	if src, ok := m.screens[m.cur].(sourcer); ok {
		line = src.sourceLine()
	}
	cmd, why := editorCommand(line)
	if cmd == nil {
		m.flash = why
		return nil
	}
	file := cmd.Args[len(cmd.Args)-1]
	return tea.ExecProcess(cmd, func(err error) tea.Msg { return editorDoneMsg{file, err} })
}

// editorCommand is $EDITOR +LINE FILE for a source line as the trace
// names it ("model.py(42): forward"), or nil and why not.
func editorCommand(line string) (*exec.Cmd, string) {
	file, n, _, ok := trace.ParseFrameName(line)
	if line == "" || !ok || file == "" {
		return nil, "no source line for the selected item"
	}
	editor := strings.Fields(os.Getenv("EDITOR"))
	if len(editor) == 0 {
		return nil, "set $EDITOR to open " + sanitize(file) + ":" + itoa(n)
	}
	if _, err := os.Stat(file); err != nil {
		return nil, sanitize(file) + " is not on this machine"
	}
	args := append(editor[1:], "+"+itoa(n), file)
	return exec.Command(editor[0], args...), ""
}

// tableSelection is a table's selected row: its name column (or, when
// set, full, the full name behind a short one) or every cell.
func tableSelection(t *table, row bool, full func(r int) string) (string, bool) {
	r, ok := t.selected()
	if !ok {
		return "", false
	}
	if !row {
		if full != nil {
			return full(r), true
		}
		return t.cell(r, t.nameCol()), true
	}
	cells := make([]string, len(t.cols))
	for c := range t.cols {
		cells[c] = strings.TrimSpace(t.cell(r, c))
	}
	return strings.Join(cells, "\t"), true
}

// nameCol is the table's flexible column, which holds the names.
func (t *table) nameCol() int {
	for i, c := range t.cols {
		if c.width == 0 {
			return i
		}
	}
	return 0
}

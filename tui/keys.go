package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
)

// keyMap is every key the UI handles. Update matches keys only through
// these bindings and the help screen is drawn from them, so help cannot
// drift from what the code does. Bindings that share a key (↑ moves a row
// in a table, the stream in the timeline) are separate because they mean
// different things and help says each.
type keyMap struct {
	// Everywhere.
	next, prev, screen, filter, back, help, quit, forceQuit key.Binding
	copyName, copyRow, edit                                 key.Binding
	// Tables and detail views.
	up, down, pageUp, pageDown, top, bottom                  key.Binding
	sort, reverse, open, opsTree, expand, collapse, diffView key.Binding
	// Timeline.
	cursorLeft, cursorRight, lineStart, lineEnd, laneUp, laneDown key.Binding
	panLeft, panRight, pageLeft, pageRight                        key.Binding
	zoomIn, zoomOut, prevStep, nextStep, wholeTrace               key.Binding
	// The / filter prompt; the line editing keys are textinput's own.
	accept, cancel key.Binding
}

func bind(keys []string, helpKey, desc string) key.Binding {
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp(helpKey, desc))
}

func newKeyMap() keyMap {
	k := func(s ...string) []string { return s }
	return keyMap{
		next:      bind(k("tab"), "tab", "next screen"),
		prev:      bind(k("shift+tab"), "shift+tab", "previous screen"),
		screen:    bind(k("1", "2", "3", "4", "5", "6", "7"), "1…7", "screen by number"),
		filter:    bind(k("/"), "/", "filter rows (regexp)"),
		back:      bind(k("esc"), "esc", "back / close / clear filter"),
		help:      bind(k("?"), "?", "this help (any key closes)"),
		quit:      bind(k("q"), "q", "quit"),
		forceQuit: bind(k("ctrl+c"), "ctrl+c", "quit, even in the filter"),
		copyName:  bind(k("y"), "y", "copy the name (OSC 52)"),
		copyRow:   bind(k("Y"), "Y", "copy the row"),
		edit:      bind(k("e"), "e", "source line in $EDITOR"),

		up:       bind(k("up", "k"), "↑ k", "row up"),
		down:     bind(k("down", "j"), "↓ j", "row down"),
		pageUp:   bind(k("pgup", "ctrl+b"), "pgup ^b", "page up"),
		pageDown: bind(k("pgdown", "ctrl+f", " "), "pgdn ^f spc", "page down"),
		top:      bind(k("home", "g"), "home g", "first row"),
		bottom:   bind(k("end", "G"), "end G", "last row"),
		sort:     bind(k("s"), "s", "next sort column"),
		reverse:  bind(k("S"), "S", "reverse the sort"),
		open:     bind(k("enter"), "enter", "open / follow link"),
		opsTree:  bind(k("t"), "t", "Ops: table / tree"),
		expand:   bind(k("right", "l"), "→ l", "Ops tree: expand"),
		collapse: bind(k("left", "h"), "← h", "Ops tree: collapse"),
		diffView: bind(k("c"), "c", "Diff: by category"),

		cursorLeft:  bind(k("left", "h"), "← h", "cursor left"),
		cursorRight: bind(k("right", "l"), "→ l", "cursor right"),
		lineStart:   bind(k("home", "g"), "home g", "cursor to start"),
		lineEnd:     bind(k("end", "G"), "end G", "cursor to end"),
		laneUp:      bind(k("up", "k"), "↑ k", "lane above"),
		laneDown:    bind(k("down", "j"), "↓ j", "lane below"),
		panLeft:     bind(k("<", ",", "shift+left"), "< ⇧←", "pan left"),
		panRight:    bind(k(">", ".", "shift+right"), "> ⇧→", "pan right"),
		pageLeft:    bind(k("pgup"), "pgup", "pan a screen left"),
		pageRight:   bind(k("pgdown"), "pgdn", "pan a screen right"),
		zoomIn:      bind(k("+", "="), "+", "zoom in at cursor"),
		zoomOut:     bind(k("-", "_"), "-", "zoom out"),
		prevStep:    bind(k("["), "[", "previous step"),
		nextStep:    bind(k("]"), "]", "next step"),
		wholeTrace:  bind(k("a", "0"), "a 0", "whole trace"),

		accept: bind(k("enter"), "enter", "keep the filter"),
		cancel: bind(k("esc"), "esc", "clear the filter"),
	}
}

// helpSection is one titled block of the help screen; its bindings are
// laid out in columns side by side.
type helpSection struct {
	title   string
	columns [][]key.Binding
}

// helpSections groups every binding for the help screen. The columns keep
// the whole list within the 22 body lines and 80 columns of an 80×24
// terminal.
func (k *keyMap) helpSections(in *textinput.Model) []helpSection {
	clearText := in.KeyMap.DeleteBeforeCursor
	clearText.SetHelp("ctrl+u", "clear the text")
	return []helpSection{
		{"Everywhere", [][]key.Binding{
			{k.next, k.prev, k.screen, k.help},
			{k.filter, k.back, k.quit, k.forceQuit},
		}},
		{"Tables and detail views", [][]key.Binding{
			{k.up, k.down, k.pageUp, k.pageDown, k.top},
			{k.bottom, k.sort, k.reverse, k.open},
			{k.opsTree, k.expand, k.collapse, k.diffView},
		}},
		{"The selected item", [][]key.Binding{{k.copyName}, {k.copyRow}, {k.edit}}},
		{"Timeline", [][]key.Binding{
			{k.cursorLeft, k.cursorRight, k.lineStart, k.lineEnd, k.laneUp},
			{k.laneDown, k.panLeft, k.panRight, k.pageLeft, k.pageRight},
			{k.zoomIn, k.zoomOut, k.prevStep, k.nextStep, k.wholeTrace},
		}},
		{"Filter prompt", [][]key.Binding{{k.accept}, {k.cancel}, {clearText}}},
	}
}

// helpLines draws the help screen from the key map, in w cells.
func (m *Model) helpLines(w int) []string {
	lines := []string{cut(" Keys (the mouse wheel scrolls)", w)}
	for _, s := range m.keys.helpSections(&m.input) {
		lines = append(lines, cut("  "+s.title, w))
		for _, l := range strings.Split(m.helpView.FullHelpView(s.columns), "\n") {
			lines = append(lines, cut("    "+strings.TrimRight(l, " "), w))
		}
	}
	return lines
}

// newHelp returns a help view drawn with the UI's renderer, so NO_COLOR
// and 16-colour terminals get what the rest of the UI gets.
func newHelp(st *styles) help.Model {
	h := help.New()
	h.FullSeparator = "   "
	h.Styles = help.Styles{
		Ellipsis:       st.dim,
		ShortKey:       st.header,
		ShortDesc:      st.plain,
		ShortSeparator: st.dim,
		FullKey:        st.header,
		FullDesc:       st.plain,
		FullSeparator:  st.plain,
	}
	return h
}

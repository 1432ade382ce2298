package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/progress"
	"github.com/charmbracelet/bubbles/textinput"
	"github.com/charmbracelet/lipgloss"
)

// View draws the whole terminal: tab bar, body, status line.
func (m *Model) View() string {
	w, h := max(m.width, 20), max(m.height, 5)
	if !m.loaded {
		return m.loadingView(w, h)
	}
	if !m.drawn {
		defer m.stage("first frame drawn")
		m.drawn = true
	}
	lines := make([]string, 0, h)
	lines = append(lines, m.tabBar(w))
	var body []string
	if m.help {
		body = m.helpLines(w)
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
		// Not in the status colours: the prompt's cursor is a reversed
		// cell, which a reversed line would hide.
		hint := "  Enter keeps, Esc clears"
		if m.filterErr != nil {
			hint = "  " + sanitize(m.filterErr.Error()) + " (filter \"" + m.filters[m.cur] + "\" kept)"
		}
		m.input.Width = max(w-width(hint)-3, 1)
		return m.input.View() + m.st.dim.Render(hint)
	case m.help:
		left = "any key closes help"
	case m.flash != "":
		left = m.flash
	default:
		left = m.screens[m.cur].hint()
		if f := m.filters[m.cur]; f != "" {
			left = "filter \"" + f + "\"  " + left
		}
		if n := len(m.stack); n > 0 {
			// Where Esc returns.
			left = "esc ← " + screenTitles[m.stack[n-1].screen] + "  " + left
		}
	}
	right := "? help  q quit"
	if width(left)+width(right)+1 > w && w-width(right)-1 >= 20 {
		// A long message gives way, not the way to help and out.
		left = cut(left, w-width(right)-1)
	}
	pad := w - width(left) - width(right)
	if pad < 1 {
		return m.st.status.Render(fit(left, w)) + m.osc
	}
	// The OSC sequence takes no cell: the terminal reads it as the frame
	// is written.
	return m.st.status.Render(left+strings.Repeat(" ", pad)+right) + m.osc
}

func (m *Model) loadingView(w, h int) string {
	phase, _ := m.prog.phase.Load().(string)
	read, total := m.prog.read.Load(), m.prog.total.Load()
	elapsed := time.Since(m.started).Truncate(100 * time.Millisecond)
	var line string
	if total > 0 {
		frac := min(float64(read)/float64(total), 1)
		const percent = 5 // " 100%"
		m.bar.Width = max(min(w-30, 50), 10) + percent
		line = fmt.Sprintf("%s  %d/%d MB", m.bar.ViewAs(frac), read>>20, total>>20)
	} else {
		line = fmt.Sprintf("%d MB read", read>>20)
	}
	lines := make([]string, h)
	lines[h/2-1] = cut("  "+phase+" ("+elapsed.String()+")", w)
	lines[h/2] = cut("  "+line, w)
	lines[h-1] = cut("  q quits", w)
	return strings.Join(lines, "\n")
}

// newFilterInput is the / prompt. Its cursor does not blink: a blink is a
// timer message per half second for an idle UI, and the status line is
// redrawn on every key anyway.
func newFilterInput(st *styles) textinput.Model {
	in := textinput.New()
	in.Prompt = "/"
	in.PromptStyle = st.plain
	in.TextStyle = st.plain
	in.PlaceholderStyle = st.dim
	in.Cursor.Style = st.plain
	in.Cursor.TextStyle = st.plain
	in.Cursor.SetMode(cursor.CursorStatic)
	return in
}

// newProgressBar is the loading screen's bar, in the 16-colour palette
// and the renderer's colour profile (plain with NO_COLOR).
func newProgressBar(r *lipgloss.Renderer, st *styles) progress.Model {
	p := progress.New(progress.WithSolidFill("6"), progress.WithFillCharacters('█', '░'), progress.WithColorProfile(r.ColorProfile()))
	p.EmptyColor = ""
	p.PercentFormat = " %3.0f%%"
	p.PercentageStyle = st.plain
	return p
}

package tui

import "github.com/charmbracelet/lipgloss"

// styles are the few text attributes the UI uses. Colours are from the 16
// basic ANSI colours only, so they work on terminals without 256 colours;
// with NO_COLOR (or a non-terminal) the renderer's profile is Ascii and
// every style renders as plain text, which is why the cursor row also
// carries a "> " marker and the current tab brackets.
type styles struct {
	header lipgloss.Style // table headers
	cursor lipgloss.Style // the selected row
	dim    lipgloss.Style // secondary text
	title  lipgloss.Style // section titles
	tabOn  lipgloss.Style
	tabOff lipgloss.Style
	status lipgloss.Style // bottom line
	bad    lipgloss.Style // regressions, high severity
	good   lipgloss.Style // improvements
	warn   lipgloss.Style // medium severity
	bar    lipgloss.Style // histogram and timeline blocks
	plain  lipgloss.Style // unstyled, from the same renderer
}

func newStyles(r *lipgloss.Renderer) *styles {
	return &styles{
		header: r.NewStyle().Bold(true),
		cursor: r.NewStyle().Reverse(true),
		dim:    r.NewStyle().Faint(true),
		title:  r.NewStyle().Bold(true).Underline(true),
		tabOn:  r.NewStyle().Bold(true).Reverse(true),
		tabOff: r.NewStyle(),
		status: r.NewStyle().Reverse(true),
		bad:    r.NewStyle().Foreground(lipgloss.Color("1")).Bold(true),
		good:   r.NewStyle().Foreground(lipgloss.Color("2")).Bold(true),
		warn:   r.NewStyle().Foreground(lipgloss.Color("3")),
		bar:    r.NewStyle().Foreground(lipgloss.Color("6")),
		plain:  r.NewStyle(),
	}
}

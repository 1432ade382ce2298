package tui

import (
	"fmt"
	"io"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Run shows the UI on the terminal behind in and out until the user quits,
// in the alternate screen with mouse wheel support, and restores the
// terminal on return. It returns the error that stopped loading, if any.
func Run(opts Options, in io.Reader, out io.Writer) error {
	if opts.Renderer == nil {
		opts.Renderer = lipgloss.NewRenderer(out)
	}
	// Settle the colour profile and, when colours show, ask the terminal
	// for its background (light or dark) now: lipgloss would otherwise
	// ask on the first frame, while bubbletea reads the terminal's input
	// and could take the answer for keys.
	if opts.Renderer.ColorProfile() != termenv.Ascii {
		opts.Renderer.HasDarkBackground()
	}
	m := New(opts)
	popts := []tea.ProgramOption{tea.WithInput(in), tea.WithOutput(out), tea.WithAltScreen(), tea.WithMouseCellMotion()}
	if opts.Stop != nil {
		popts = append(popts, tea.WithContext(opts.Stop))
	}
	p := tea.NewProgram(m, popts...)
	if _, err := p.Run(); err != nil {
		return fmt.Errorf("terminal UI: %w", err)
	}
	return m.Err()
}

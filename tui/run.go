package tui

import (
	"fmt"
	"io"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
)

// Run shows the UI on the terminal behind in and out until the user quits,
// in the alternate screen with mouse wheel support, and restores the
// terminal on return. It returns the error that stopped loading, if any.
func Run(opts Options, in io.Reader, out io.Writer) error {
	if opts.Renderer == nil {
		opts.Renderer = lipgloss.NewRenderer(out)
	}
	m := New(opts)
	p := tea.NewProgram(m, tea.WithInput(in), tea.WithOutput(out), tea.WithAltScreen(), tea.WithMouseCellMotion())
	if _, err := p.Run(); err != nil {
		return fmt.Errorf("terminal UI: %w", err)
	}
	return m.Err()
}

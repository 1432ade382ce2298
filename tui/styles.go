package tui

import (
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/tracelens/tracelens/analyze"
)

// styles are the text attributes the UI uses. Colour carries meaning, as in
// k9s, lazygit and gh-dash: red is bad (high severity, a significant
// regression, a GPU idle), yellow is a warning (medium severity), green is
// good (an improvement), and kernel categories have a hue per kind of work
// (compute, memory, communication, generated code) so a table or a timeline
// lane reads at a glance.
//
// Every colour is adaptive: the renderer picks the light or dark variant
// from the terminal's background (lipgloss queries it once), and degrades
// 256-colour values to the 16 basic colours on terminals without them.
// With NO_COLOR (or a non-terminal) the renderer's profile is Ascii and
// every style renders as plain text, which is why nothing is said by colour
// alone: the cursor row also carries a "> " marker, the current tab
// brackets, a diff row its ▲/▼/~ mark and a finding its severity word.
type styles struct {
	header lipgloss.Style // table headers
	cursor lipgloss.Style // the selected row
	dim    lipgloss.Style // secondary text
	title  lipgloss.Style // section titles
	tabOn  lipgloss.Style
	tabOff lipgloss.Style
	status lipgloss.Style // bottom line
	bad    lipgloss.Style // regressions, high severity, GPU idle
	good   lipgloss.Style // improvements
	warn   lipgloss.Style // medium severity
	low    lipgloss.Style // low severity
	bar    lipgloss.Style // histogram blocks
	plain  lipgloss.Style // unstyled, from the same renderer
	link   lipgloss.Style // a line Enter follows

	// Timeline lanes by what they show.
	gpuLane  lipgloss.Style // GPU stream busy
	idleLane lipgloss.Style // GPU stream idle for a whole column
	opLane   lipgloss.Style // host ops
	pyLane   lipgloss.Style // Python frames
	annLane  lipgloss.Style // steps, phases, user ranges

	// cats colours each kernel category; other categories are plain.
	cats map[string]lipgloss.Style
	// ledger colours each step-ledger line (see ledger.go).
	ledger map[string]lipgloss.Style
	// colour is false when styles render as plain text (NO_COLOR, not a
	// terminal): legends that explain colours are then left out.
	colour bool
}

// Adaptive colours: the light variant is darker so that it reads on a
// white background.
var (
	colRed     = lipgloss.AdaptiveColor{Light: "1", Dark: "9"}
	colGreen   = lipgloss.AdaptiveColor{Light: "2", Dark: "10"}
	colYellow  = lipgloss.AdaptiveColor{Light: "130", Dark: "11"}
	colBlue    = lipgloss.AdaptiveColor{Light: "4", Dark: "12"}
	colCyan    = lipgloss.AdaptiveColor{Light: "6", Dark: "14"}
	colMagenta = lipgloss.AdaptiveColor{Light: "5", Dark: "13"}
	colGrey    = lipgloss.AdaptiveColor{Light: "244", Dark: "245"}
)

func newStyles(r *lipgloss.Renderer) *styles {
	fg := func(c lipgloss.TerminalColor) lipgloss.Style { return r.NewStyle().Foreground(c) }
	compute, memory := fg(colBlue), fg(colCyan)
	return &styles{
		colour:   r.ColorProfile() != termenv.Ascii,
		header:   r.NewStyle().Bold(true),
		cursor:   r.NewStyle().Reverse(true),
		dim:      r.NewStyle().Faint(true),
		title:    r.NewStyle().Bold(true).Underline(true),
		tabOn:    r.NewStyle().Bold(true).Reverse(true),
		tabOff:   r.NewStyle(),
		status:   r.NewStyle().Reverse(true),
		bad:      fg(colRed).Bold(true),
		good:     fg(colGreen).Bold(true),
		warn:     fg(colYellow),
		low:      fg(colGrey),
		bar:      fg(colCyan),
		plain:    r.NewStyle(),
		link:     fg(colBlue).Underline(true),
		gpuLane:  fg(colGreen),
		idleLane: fg(colRed).Faint(true),
		opLane:   fg(colBlue),
		pyLane:   fg(colMagenta),
		annLane:  fg(colYellow),
		ledger:   ledgerStyles(fg),
		cats: map[string]lipgloss.Style{
			analyze.CategoryGEMM:          compute,
			analyze.CategoryGEMV:          compute,
			analyze.CategoryConv:          compute,
			analyze.CategoryAttention:     compute,
			analyze.CategoryElementwise:   memory,
			analyze.CategoryReduction:     memory,
			analyze.CategoryRNG:           memory,
			analyze.CategoryCopy:          fg(colGrey),
			analyze.CategoryMemset:        fg(colGrey),
			analyze.CategoryCommunication: fg(colYellow),
			analyze.CategoryTriton:        fg(colMagenta),
		},
	}
}

// severity is the style of a finding's severity: red high, yellow medium,
// grey low.
func (st *styles) severity(s string) lipgloss.Style {
	switch s {
	case analyze.High:
		return st.bad
	case analyze.Medium:
		return st.warn
	}
	return st.low
}

// category is the style of a kernel category.
func (st *styles) category(c string) lipgloss.Style {
	if s, ok := st.cats[c]; ok {
		return s
	}
	return st.plain
}

// change is the style of a diff mark: a significant slowdown is red, a
// significant speed-up green, noise dim; added and removed rows are
// yellow (neither better nor worse by themselves).
func (st *styles) change(mark string) lipgloss.Style {
	switch mark {
	case markWorse:
		return st.bad
	case markBetter:
		return st.good
	case markNoise:
		return st.dim
	}
	return st.warn
}

// Package tui is tracelens's terminal user interface: a bubbletea program
// that explores one trace (overview, kernels, ops, findings, timeline) or
// the difference between two, for engineers who live in a terminal (ssh'd
// into a GPU box, no browser).
//
// The model never does work proportional to the trace on a keypress: every
// table is precomputed (rows, display names, one ordering per sortable
// column) when the trace is loaded, and View renders only the rows that fit
// on the screen. Names taken from the trace are sanitised once, so no
// terminal escape sequence in a kernel or op name reaches the terminal.
//
// Following a link (a finding's kernel, an op's caller, the timeline's
// kernel) pushes every screen's state on a back stack that Esc pops, as
// k9s and lazygit do. The screens only render: classification,
// attribution (which op launched a kernel, the user's source line above
// it) and every figure come from analyze's Result and View.
package tui

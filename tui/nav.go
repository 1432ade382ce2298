package tui

// The back stack: following a link (a finding's kernel, an op's caller,
// the timeline's kernel) pushes where the user was, every screen's
// state included (selected row, scroll, sort, filter, open detail,
// timeline window), and Esc pops it, as k9s and lazygit do. Switching
// screens by number or Tab leaves the trail and empties the stack, so Esc
// there means what it always meant: close the detail, clear the filter.

// maxBack bounds the back stack; the oldest places fall off.
const maxBack = 64

// place is where the user was when a link was followed.
type place struct {
	screen  int
	filters [numScreens]string
	restore [numScreens]func()
}

// here captures the current place.
func (m *Model) here() place {
	p := place{screen: m.cur, filters: m.filters}
	for i, s := range m.screens {
		if s != nil {
			p.restore[i] = s.save()
		}
	}
	return p
}

// follow runs go, a link's jump, after pushing where the user was.
func (m *Model) follow(jump func()) {
	m.stack = append(m.stack, m.here())
	if len(m.stack) > maxBack {
		m.stack = append(m.stack[:0], m.stack[len(m.stack)-maxBack:]...)
	}
	jump()
}

// pop returns to the last place a link was followed from, and reports
// whether there was one.
func (m *Model) pop() bool {
	if len(m.stack) == 0 {
		return false
	}
	p := m.stack[len(m.stack)-1]
	m.stack = m.stack[:len(m.stack)-1]
	for _, r := range p.restore {
		if r != nil {
			r()
		}
	}
	m.filters, m.cur = p.filters, p.screen
	return true
}

// clone returns a copy of t's state (nil for nil), for a place to
// restore: rows, sort and filter are shared slices that no table
// changes in place.
func (t *table) clone() *table {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

// restoreTable writes a saved table state back into t, so pointers to t
// stay valid.
func restoreTable(t, saved *table) {
	if t != nil && saved != nil {
		*t = *saved
	}
}

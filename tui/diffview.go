package tui

import "fmt"

// diffScreen is screen 6: the comparison of a BASE and a NEW trace.
type diffScreen struct {
	d *data
}

func newDiffScreen(d *data) *diffScreen { return &diffScreen{d: d} }

func (s *diffScreen) title() string { return "Diff" }

func (s *diffScreen) handle(m *Model, key string) bool { return false }

func (s *diffScreen) scroll(int) {}

func (s *diffScreen) render(w, h int, st *styles) []string {
	if s.d.base == nil {
		return []string{"", cut("  One trace is open. To compare two, run: tracelens tui BASE NEW", w)}
	}
	return []string{"", cut(fmt.Sprintf("  BASE %s was read, but this build has no diff engine yet (package diff, issue 5):", sanitize(s.d.base.Source)), w),
		cut("  screens 1–5 show NEW; the comparison table is not available.", w)}
}

func (s *diffScreen) hint() string { return "diff" }

func (s *diffScreen) setFilter(string) bool { return false }

func (s *diffScreen) back() bool { return false }

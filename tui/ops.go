package tui

import (
	"cmp"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/tracelens/tracelens/analyze"
)

// opsScreen is screen 3: the key_averages()-like op table, or with t the
// op tree (op → child ops → kernels).
type opsScreen struct {
	d      *data
	flat   *table
	tree   *table
	open   []bool // expanded tree nodes
	isTree bool
	filter string
}

func newOpsScreen(d *data) *opsScreen {
	ops := d.res.Ops
	n := len(ops)
	desc := func(f func(o *analyze.OpStat) float64) []int32 {
		return orderBy(n, func(a, b int) int { return cmp.Compare(f(&ops[b]), f(&ops[a])) })
	}
	names := make([]string, n)
	for i := range ops {
		names[i] = sanitize(ops[i].Name)
	}
	flatCols := []column{
		{title: "OP", order: orderBy(n, func(a, b int) int { return cmp.Compare(names[a], names[b]) })},
		{title: "CALLS", width: 6, right: true, order: desc(func(o *analyze.OpStat) float64 { return float64(o.Calls) })},
		{title: "CPU TOTAL", width: 10, right: true, order: desc(func(o *analyze.OpStat) float64 { return o.TotalCPUUs })},
		{title: "CPU SELF", width: 9, right: true, drop: 2, order: desc(func(o *analyze.OpStat) float64 { return o.SelfCPUUs })},
		{title: "GPU TOTAL", width: 10, right: true, order: desc(func(o *analyze.OpStat) float64 { return o.GPUUs })},
		{title: "GPU SELF", width: 9, right: true, drop: 1, order: desc(func(o *analyze.OpStat) float64 { return o.SelfGPUUs })},
		{title: "KERNELS", width: 8, right: true, drop: 3, order: desc(func(o *analyze.OpStat) float64 { return float64(o.Kernels) })},
	}
	flatCell := func(row, col int) string {
		o := &ops[row]
		switch col {
		case 0:
			return names[row]
		case 1:
			return itoa(o.Calls)
		case 2:
			return us(o.TotalCPUUs).String()
		case 3:
			return us(o.SelfCPUUs).String()
		case 4:
			return us(o.GPUUs).String()
		case 5:
			return us(o.SelfGPUUs).String()
		case 6:
			return itoa(o.Kernels)
		}
		return ""
	}
	s := &opsScreen{d: d, open: make([]bool, len(d.tree.nodes))}
	s.flat = newTable(flatCols, nil, nil, 4, flatCell)

	nodes := d.tree.nodes
	// Kernel leaves take their category's colour, as on the Kernels screen.
	leafStyle := func(row int, st *styles) lipgloss.Style {
		if nd := &nodes[row]; nd.kernel {
			if k, ok := d.kernelIndex[nd.name]; ok {
				return st.category(d.kernels[k].Category)
			}
		}
		return st.plain
	}
	treeCols := []column{
		{title: "OP › CHILD OPS › KERNELS", style: leafStyle},
		{title: "CALLS", width: 6, right: true},
		{title: "CPU TOTAL", width: 9, right: true},
		{title: "GPU TOTAL", width: 9, right: true},
	}
	treeCell := func(row, col int) string {
		nd := &nodes[row]
		switch col {
		case 0:
			mark := "  "
			switch {
			case nd.kernel:
				mark = "· "
			case len(nd.kids) > 0 && (s.open[row] || s.filter != ""):
				mark = "▾ "
			case len(nd.kids) > 0:
				mark = "▸ "
			}
			name := nd.name
			if nd.kernel {
				name = sanitize(analyze.ShortKernelName(name))
			}
			return strings.Repeat("  ", min(nd.depth, 12)) + mark + name
		case 1:
			return itoa(nd.calls)
		case 2:
			if nd.kernel {
				return "-"
			}
			return nd.cpu.String()
		case 3:
			return nd.gpu.String()
		}
		return ""
	}
	s.tree = newTable(treeCols, nil, d.tree.visible(s.open, ""), -1, treeCell)
	return s
}

func (s *opsScreen) title() string { return "Ops" }

func (s *opsScreen) cur() *table {
	if s.isTree {
		return s.tree
	}
	return s.flat
}

func (s *opsScreen) handle(m *Model, msg tea.KeyMsg) bool {
	km := &m.keys
	switch {
	case key.Matches(msg, km.opsTree):
		s.isTree = !s.isTree
		return true
	case key.Matches(msg, km.sort):
		s.cur().cycleSort()
		return true
	}
	if !s.isTree {
		return tableKeys(s.flat, km, msg)
	}
	row, ok := s.tree.selected()
	switch {
	case key.Matches(msg, km.open, km.expand):
		if ok && len(s.d.tree.nodes[row].kids) > 0 {
			s.open[row] = key.Matches(msg, km.expand) || !s.open[row]
			s.rebuild()
		}
		return true
	case key.Matches(msg, km.collapse):
		if !ok {
			return true
		}
		if s.open[row] && s.filter == "" {
			s.open[row] = false
			s.rebuild()
		} else if p := s.d.tree.nodes[row].parent; p >= 0 {
			s.tree.selectRow(int(p))
		}
		return true
	}
	return tableKeys(s.tree, km, msg)
}

// rebuild recomputes the visible tree rows after expanding, collapsing or
// filtering, keeping the cursor on its node.
func (s *opsScreen) rebuild() {
	s.tree.base = s.d.tree.visible(s.open, s.filter)
	s.tree.refresh()
}

func (s *opsScreen) scroll(d int) { s.cur().move(d) }

func (s *opsScreen) render(w, h int, st *styles) []string { return s.cur().render(w, h, st) }

func (s *opsScreen) hint() string {
	if s.isTree {
		return s.tree.position() + " tree rows  → expands ← collapses  t table"
	}
	return s.flat.position() + " ops  sort " + s.flat.sortName() + "  t tree"
}

func (s *opsScreen) setFilter(f string) bool {
	s.filter = f
	s.flat.setFilter(f)
	s.rebuild()
	return true
}

func (s *opsScreen) back() bool { return false }

package tui

import (
	"cmp"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/tracelens/tracelens/analyze"
)

// opsScreen is screen 3: the key_averages()-like op table, or with t the
// op tree (op → child ops → kernels); Enter on either opens the op's
// detail.
type opsScreen struct {
	d      *data
	flat   *table
	tree   *table
	open   []bool // expanded tree nodes
	isTree bool
	filter string
	// byName lists the tree's op nodes of each op name (sanitised).
	byName map[string][]int32
	detail *opDetail // nil when a table is shown
	lastW  int       // width of the last render
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
		{title: "OP", asc: true, order: orderBy(n, func(a, b int) int { return cmp.Compare(names[a], names[b]) })},
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
	s := &opsScreen{d: d, open: make([]bool, len(d.tree.nodes)), byName: map[string][]int32{}}
	for i := range d.tree.nodes {
		if nd := &d.tree.nodes[i]; !nd.kernel {
			s.byName[nd.name] = append(s.byName[nd.name], int32(i))
		}
	}
	s.flat = newTable(flatCols, nil, nil, 4, flatCell)
	s.tree = newOpsTree(d, s)
	return s
}

// newOpsTree is the op tree's table: a row per visible node, names
// indented by depth, kernel leaves in their category's colour.
func newOpsTree(d *data, s *opsScreen) *table {
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
	return newTable(treeCols, nil, d.tree.visible(s.open, ""), -1, treeCell)
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
	if s.detail != nil {
		if key.Matches(msg, km.open) {
			if i, ok := s.detail.lines.selected(s.detail.view); ok {
				s.detail.lines.links[i].follow(m)
			}
			return true
		}
		return tableKeys(s.detail.view, km, msg)
	}
	switch {
	case key.Matches(msg, km.opsTree):
		s.isTree = !s.isTree
		return true
	case key.Matches(msg, km.sort):
		s.cur().cycleSort()
		return true
	case key.Matches(msg, km.reverse):
		return s.cur().flipSort()
	}
	if !s.isTree {
		if key.Matches(msg, km.open) {
			if row, ok := s.flat.selected(); ok {
				s.openRow(row, "")
			}
			return true
		}
		return tableKeys(s.flat, km, msg)
	}
	row, ok := s.tree.selected()
	switch {
	case key.Matches(msg, km.open):
		if ok {
			s.openNode(int32(row))
		}
		return true
	case key.Matches(msg, km.expand):
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

// openRow opens the detail of row of the Ops table: every node of the
// op tree with its name. focus, when set, is a kernel to select.
func (s *opsScreen) openRow(row int, focus string) {
	stat := &s.d.res.Ops[row]
	name := sanitize(stat.Name)
	s.detail = &opDetail{name: name, nodes: s.byName[name], stat: stat, focus: focus}
	s.detail.build(s.d, max(s.lastW-2, 20))
}

// openNode opens the detail of node n of the op tree; a kernel leaf
// opens its op's, on the kernel's line.
func (s *opsScreen) openNode(n int32) {
	nd := &s.d.tree.nodes[n]
	focus := ""
	if nd.kernel {
		if len(nd.launches) > 0 {
			focus = s.d.t.GPU[nd.launches[0]].Name
		}
		n = nd.parent
		nd = &s.d.tree.nodes[n]
	}
	s.detail = &opDetail{name: nd.name, nodes: []int32{n}, focus: focus}
	s.detail.build(s.d, max(s.lastW-2, 20))
}

func (s *opsScreen) scroll(d int) {
	if s.detail != nil {
		s.detail.view.move(d)
		return
	}
	s.cur().move(d)
}

func (s *opsScreen) render(w, h int, st *styles) []string {
	s.lastW = w
	if s.detail != nil {
		if s.detail.w != w-2 {
			cursor := s.detail.view.cursor
			s.detail.build(s.d, w-2)
			s.detail.view.cursor = cursor
		}
		return s.detail.view.render(w, h, st)
	}
	return s.cur().render(w, h, st)
}

func (s *opsScreen) hint() string {
	if s.detail != nil {
		return "op detail  line " + s.detail.view.position() + "  Enter on → follows  e source  Esc back"
	}
	if s.isTree {
		return s.tree.position() + " tree rows  → expands ← collapses  Enter opens  t table"
	}
	return s.flat.position() + " ops  sort " + s.flat.sortName() + "  Enter opens  t tree"
}

func (s *opsScreen) setFilter(f string) bool {
	if s.detail != nil {
		return false
	}
	s.filter = f
	s.flat.setFilter(f)
	s.rebuild()
	return true
}

func (s *opsScreen) back() bool {
	if s.detail == nil {
		return false
	}
	s.detail = nil
	return true
}

func (s *opsScreen) save() func() {
	flat, tree, open, isTree, filter := s.flat.clone(), s.tree.clone(), slices.Clone(s.open), s.isTree, s.filter
	var detail *opDetail
	if s.detail != nil {
		c := *s.detail
		c.view = c.view.clone()
		detail = &c
	}
	return func() {
		restoreTable(s.flat, flat)
		restoreTable(s.tree, tree)
		copy(s.open, open)
		s.isTree, s.filter, s.detail = isTree, filter, detail
	}
}

// selection is the selected op's name (a kernel leaf's full name), or
// its row; in the detail, the line under the cursor.
func (s *opsScreen) selection(row bool) (string, bool) {
	if s.detail != nil {
		return s.detail.lines.selection(s.d, s.detail.view, row)
	}
	if !s.isTree {
		return tableSelection(s.flat, row, nil)
	}
	return tableSelection(s.tree, row, func(r int) string {
		if nd := &s.d.tree.nodes[r]; nd.kernel && len(nd.launches) > 0 {
			return sanitize(s.d.t.GPU[nd.launches[0]].Name)
		}
		return s.d.tree.nodes[r].name
	})
}

// sourceLine is the op detail's Python line (the one under the cursor,
// else the first); on the table or tree, the line above most of the
// selected op's (or kernel leaf's) launches.
func (s *opsScreen) sourceLine() string {
	if s.detail != nil {
		return s.detail.sourceLine()
	}
	var nodes []int32
	if row, ok := s.cur().selected(); !ok {
		return ""
	} else if s.isTree {
		nodes = []int32{int32(row)}
	} else {
		nodes = s.byName[sanitize(s.d.res.Ops[row].Name)]
	}
	if top := ranked(userLines(s.d, nodes), 1); len(top) > 0 {
		return top[0].name
	}
	return ""
}

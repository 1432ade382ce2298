package tui

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/charmbracelet/lipgloss"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/trace"
)

// opDetail is the detail view of an op (Enter on the Ops table or on a
// node of the op tree): its figures, its callers, its input shapes, the
// user's Python lines above its launches and its kernels, each caller
// and kernel a link. Attribution is analyze's: the op tree puts each GPU
// activity under the op View.Op names, and the lines are View.UserLine.
type opDetail struct {
	name  string  // the op's name, sanitised
	nodes []int32 // the op tree's nodes this op is
	// stat is analyze's row of the op in the Ops table, nil for a tree
	// node (a path of names, which only the tree aggregates).
	stat  *analyze.OpStat
	focus string // a kernel leaf's name: its line is selected first
	lines detailLines
	view  *table
	w     int // width the lines were built for
}

// maxDistinct bounds each list of the op detail (shapes, lines).
const maxDistinct = 8

// build lays the detail out for width w.
func (o *opDetail) build(d *data, w int) {
	tr := &d.tree
	var l detailLines
	l.add(cut(o.name, w), lineTitle, noLink)
	if o.stat != nil {
		s := o.stat
		l.add(cut(fmt.Sprintf("calls %d · CPU total %s, self %s · GPU total %s, self %s · %d kernels", s.Calls,
			us(s.TotalCPUUs), us(s.SelfCPUUs), us(s.GPUUs), us(s.SelfGPUUs), s.Kernels), w), lineMeta, noLink)
	} else {
		nd := &tr.nodes[o.nodes[0]]
		l.add(cut(fmt.Sprintf("calls %d · CPU total %s · GPU total %s (this path of the op tree)", nd.calls, nd.cpu, nd.gpu), w), lineMeta, noLink)
		if nd.depth > 0 {
			for _, p := range wrap(tr.path(o.nodes[0]), w-2) {
				l.add("  "+p, lineText, noLink)
			}
		}
	}
	var calls []int32
	for _, n := range o.nodes {
		calls = append(calls, tr.nodes[n].ops...)
	}
	o.callers(&l, d.t, calls, w)
	o.shapes(&l, d.t, calls, w)
	o.pythonLines(&l, d, w)
	o.kernels(&l, d, w)
	o.view = l.table("OP DETAIL", func(st *styles) lipgloss.Style { return st.dim })
	o.lines, o.w = l, w
	if o.focus != "" {
		for i, k := range l.links {
			if k.kernel >= 0 && d.kernels[k.kernel].Name == o.focus {
				o.view.selectRow(i)
			}
		}
	}
}

// callers lists the ops the calls ran inside, each a link to its detail.
func (o *opDetail) callers(l *detailLines, t *trace.Trace, calls []int32, w int) {
	l.add("", lineText, noLink)
	l.add("Called from", lineSection, noLink)
	by, top := map[string]int{}, 0
	for _, c := range calls {
		if p := t.Ops[c].Parent; p != trace.None {
			by[t.Ops[p].Name]++
		} else {
			top++
		}
	}
	for _, c := range ranked(by, maxDistinct) {
		l.add(cut(fmt.Sprintf("  → %6d× %s", c.n, sanitize(c.name)), w), lineLink, opLink(c.name))
	}
	if len(by) > maxDistinct {
		l.add(fmt.Sprintf("    … %d more callers", len(by)-maxDistinct), lineText, noLink)
	}
	if top > 0 {
		l.add(fmt.Sprintf("    %6d× no enclosing op (called from Python)", top), lineText, noLink)
	}
	if len(calls) == 0 {
		l.add("    none: GPU work launched outside any op", lineText, noLink)
	}
}

// shapes lists the calls' input shapes as the profiler recorded them.
func (o *opDetail) shapes(l *detailLines, t *trace.Trace, calls []int32, w int) {
	l.add("", lineText, noLink)
	l.add("Input shapes", lineSection, noLink)
	by := map[string]int{}
	for _, c := range calls {
		if dims := t.Ops[c].InputDims; dims != "" && dims != "[]" {
			by[dims]++
		}
	}
	if len(by) == 0 {
		l.add("    none recorded (record_shapes=True records them)", lineText, noLink)
		return
	}
	for _, s := range ranked(by, maxDistinct) {
		for i, p := range wrap(sanitize(s.name), w-13) {
			if i == 0 {
				l.add(fmt.Sprintf("    %6d× %s", s.n, p), lineText, noLink)
			} else {
				l.add("            "+p, lineText, noLink)
			}
		}
	}
	if len(by) > maxDistinct {
		l.add(fmt.Sprintf("    … %d more shapes", len(by)-maxDistinct), lineText, noLink)
	}
}

// pythonLines lists the user's source lines above the op's GPU launches
// (analyze's View.UserLine), most launches first; e opens one.
func (o *opDetail) pythonLines(l *detailLines, d *data, w int) {
	l.add("", lineText, noLink)
	l.add("Python lines (e opens in $EDITOR)", lineSection, noLink)
	by := userLines(d, o.nodes)
	if len(by) == 0 {
		l.add("    none: analyze names the user's line per GPU launch, and none of this op's has one", lineText, noLink)
		return
	}
	for _, p := range ranked(by, maxDistinct) {
		l.addSource(cut(fmt.Sprintf("  ▸ %6d× %s", p.n, sanitize(p.name)), w), p.name)
	}
	if len(by) > maxDistinct {
		l.add(fmt.Sprintf("    … %d more lines", len(by)-maxDistinct), lineText, noLink)
	}
}

// userLines counts the user's source lines (analyze's View.UserLine)
// above the GPU launches under the op tree's nodes ns.
func userLines(d *data, ns []int32) map[string]int {
	v := d.res.View()
	by := map[string]int{}
	d.tree.leaves(ns, func(leaf int32) {
		for _, g := range d.tree.nodes[leaf].launches {
			if line := v.UserLine(int(g)); line != "" {
				by[line]++
			}
		}
	})
	return by
}

// opKernel is one kernel (or copy) the op launched, summed over its
// leaves.
type opKernel struct {
	name  string // the full name, as the trace has it
	count int
	total trace.Duration
}

// kernels lists what the op launched, children included: launches, GPU
// total and mean, largest total first, each kernel a link to its detail.
func (o *opDetail) kernels(l *detailLines, d *data, w int) {
	l.add("", lineText, noLink)
	l.add("Kernels (launched inside the op, child ops included)", lineSection, noLink)
	by := map[string]*opKernel{}
	var ks []*opKernel
	d.tree.leaves(o.nodes, func(leaf int32) {
		nd := &d.tree.nodes[leaf]
		name := nd.name
		if len(nd.launches) > 0 {
			name = d.t.GPU[nd.launches[0]].Name
			if d.t.GPU[nd.launches[0]].Kind != trace.Kernel {
				name = nd.name
			}
		}
		k := by[name]
		if k == nil {
			k = &opKernel{name: name}
			by[name] = k
			ks = append(ks, k)
		}
		k.count += nd.calls
		k.total += nd.gpu
	})
	if len(ks) == 0 {
		l.add("    none: no GPU work was launched inside this op", lineText, noLink)
		return
	}
	slices.SortStableFunc(ks, func(a, b *opKernel) int {
		if c := cmp.Compare(b.total, a.total); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	l.add(fmt.Sprintf("    %7s %9s %9s  %s", "COUNT", "TOTAL", "MEAN", "KERNEL"), lineText, noLink)
	for _, k := range ks {
		row, ok := d.kernelIndex[k.name]
		short, to := sanitize(k.name), noLink
		if ok {
			short, to = d.kernels[row].short, kernelLink(row)
		}
		mark := "    "
		if ok {
			mark = "  → "
		}
		mean := k.total / trace.Duration(max(k.count, 1))
		l.add(cut(fmt.Sprintf("%s%7d %9s %9s  %s", mark, k.count, k.total, mean, short), w), map[bool]lineKind{true: lineLink, false: lineText}[ok], to)
	}
}

// sourceLine is the Python line under the cursor, else the op's first.
func (o *opDetail) sourceLine() string {
	if i, ok := o.lines.selected(o.view); ok && o.lines.src[i] != "" {
		return o.lines.src[i]
	}
	for _, s := range o.lines.src {
		if s != "" {
			return s
		}
	}
	return ""
}

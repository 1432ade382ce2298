package analyze

import (
	"cmp"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// ops builds the key_averages()-like table: GPU time reaches an op through
// kernel → launch call → innermost op, then up the op's parents.
func (ix *index) ops() []OpStat {
	t := ix.t
	// The ops are read from the HostTable's columns (the ops themselves
	// are 96 bytes each, of which the table reads 28), a row per
	// distinct name, by the name column.
	ops := &ix.host.ops
	rowOfName := make([]*OpStat, len(ops.names))
	for k, name := range ops.names {
		rowOfName[k] = &OpStat{Name: name, PerStep: make([]StepShare, len(t.Steps))}
	}
	// self[i] is op i's time less its children's, gathered in the one
	// pass over the ops (a child adds to self[i] before or after i's own
	// duration: integers, exact in any order) and turned into the rows'
	// self time after, in op order, from the two dense arrays: a pass of
	// its own over the ops to sum the children first read them twice.
	self := make([]trace.Duration, len(t.Ops))
	steps := newStepCursor(t)
	// An op's row is its name's (rowOfName by the name column): the GPU
	// pass below walks every kernel's ops up to the root and reads their
	// rows by index, not by hashing their names again (300 k lookups on
	// the copies class), and no array of rows per op is made.
	for i, n := range ops.name {
		d := trace.Duration(ops.end[i] - ops.start[i])
		self[i] += d
		if p := ops.parent[i]; p != trace.None {
			self[p] -= d
		}
		r := rowOfName[n]
		r.Calls++
		st := steps.of(ops.start[i])
		if st >= 0 {
			r.PerStep[st].Count++
		}
		if !ops.sameNameAbove(trace.Index(i)) {
			r.TotalCPUUs += us(d)
			if st >= 0 {
				r.PerStep[st].Us += us(d)
			}
		}
	}
	for i, n := range ops.name {
		rowOfName[n].SelfCPUUs += us(max(self[i], 0))
	}
	var path []*OpStat // the rows (names) met on the way up
	for g := range t.GPU {
		op := ix.opOf(g)
		if op == trace.None {
			continue
		}
		d := us(t.GPU[g].Dur())
		rowOfName[ops.name[op]].SelfGPUUs += d
		path = path[:0]
		for cur := op; cur != trace.None; cur = ops.parent[cur] {
			r := rowOfName[ops.name[cur]]
			if slices.Contains(path, r) {
				continue
			}
			path = append(path, r)
			r.GPUUs += d
			if t.GPU[g].Kind == trace.Kernel {
				r.Kernels++
			}
		}
	}
	out := make([]OpStat, 0, len(rowOfName))
	for _, r := range rowOfName {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b OpStat) int {
		if c := cmp.Compare(b.GPUUs, a.GPUUs); c != 0 {
			return c
		}
		if c := cmp.Compare(b.TotalCPUUs, a.TotalCPUUs); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return out
}

// sameNameAbove reports whether an op enclosing op i has its name, so
// recursive calls count once in the total: read from the name and
// parent columns (equal numbers: equal names).
func (c *spanColumns) sameNameAbove(i trace.Index) bool {
	name := c.name[i]
	for p := c.parent[i]; p != trace.None; p = c.parent[p] {
		if c.name[p] == name {
			return true
		}
	}
	return false
}

// threadTime is a point on one host thread's timeline.
type threadTime struct {
	th trace.Index
	at trace.Time
}

// moduleFrame reports whether a Python frame is an nn.Module call as
// torch.profiler names them ("nn.Module: Linear_0").
func moduleFrame(name string) (string, bool) {
	return strings.CutPrefix(name, "nn.Module: ")
}

// annotations breaks GPU and CPU time down per record_function range and
// nn.Module frame (ProfilerStep ranges are steps, not annotations).
func (ix *index) annotations() []AnnotationStat {
	t := ix.t
	bl := ix.backwardLaunches()
	// A row per kind and name, found by the name's address (nameCache),
	// with its calls' own GPU times beside it.
	type row struct {
		AnnotationStat
		perCall []float64
	}
	var ranges, modules nameCache[*row]
	var rows []*row
	newRow := func(kind string) func(string) *row {
		return func(name string) *row {
			r := &row{AnnotationStat: AnnotationStat{Name: name, Kind: kind, PerStep: make([]StepShare, len(t.Steps))}}
			rows = append(rows, r)
			return r
		}
	}
	newRange, newModule := newRow(AnnotationRange), newRow(AnnotationModule)
	add := func(kind, name string, th trace.Index, s trace.Span) {
		var r *row
		if kind == AnnotationModule {
			r = modules.get(name, newModule)
		} else {
			r = ranges.get(name, newRange)
		}
		r.Count++
		r.CPUUs += us(s.Dur())
		if st := t.StepOf(s.Start); st >= 0 {
			r.PerStep[st].Count++
			r.PerStep[st].Us += us(s.Dur())
		}
		gpu, _, k := ix.owned.Totals(th, s)
		r.perCall = append(r.perCall, us(gpu))
		bg, bk := bl.causedElsewhere(th, s.Start, s.End)
		gpu, k = gpu+bg, k+bk
		r.GPUUs += us(gpu)
		r.Kernels += k
	}
	for i := range t.Annotations {
		a := &t.Annotations[i]
		if strings.HasPrefix(a.Name, "ProfilerStep#") {
			continue
		}
		add(AnnotationRange, a.Name, a.Thread, a.Span)
	}
	// The module frames marked in the HostTable's frame pass, in frame
	// order: not every frame's name read again.
	ix.host.modules.each(func(i int) {
		f := &t.Frames[i]
		name, _ := moduleFrame(f.Name)
		add(AnnotationModule, name, f.Thread, f.Span)
	})
	out := make([]AnnotationStat, 0, len(rows))
	for _, r := range rows {
		r.MedianGPUUs = median(r.perCall)
		out = append(out, r.AnnotationStat)
	}
	slices.SortFunc(out, func(a, b AnnotationStat) int {
		if c := cmp.Compare(b.GPUUs, a.GPUUs); c != 0 {
			return c
		}
		if c := cmp.Compare(b.CPUUs, a.CPUUs); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Kind, b.Kind); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return out
}

// opNamed returns op i or the op around it named name, or None.
func (ix *index) opNamed(i trace.Index, name string) trace.Index {
	for ; i != trace.None; i = ix.t.Ops[i].Parent {
		if ix.t.Ops[i].Name == name {
			return i
		}
	}
	return trace.None
}

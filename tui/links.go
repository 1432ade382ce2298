package tui

import (
	"fmt"
	"math"
	"strings"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/trace"
)

// Links between screens: a finding names kernels, gaps and chains; the
// timeline names kernels and ops. Following one switches screen and puts
// the cursor on the thing named, clearing a filter that would hide it.

// showKernel opens kernel row's detail on the Kernels screen.
func (m *Model) showKernel(row int) {
	ks := m.screens[scrKernels].(*kernelsScreen)
	m.filters[scrKernels] = ""
	ks.tbl.setFilter("")
	ks.show(row)
	m.goTo(scrKernels)
}

// showOp selects the op named name in the Ops table.
func (m *Model) showOp(name string) {
	os := m.screens[scrOps].(*opsScreen)
	for row := range m.data.res.Ops {
		if m.data.res.Ops[row].Name == name {
			m.filters[scrOps] = ""
			os.setFilter("")
			os.isTree = false
			os.flat.selectRow(row)
			m.goTo(scrOps)
			return
		}
	}
}

// showTimeline puts the timeline on span, named what, on the lane of GPU
// stream (device, stream) when there is one.
func (m *Model) showTimeline(span trace.Span, device, stream int32, what string) {
	ts := m.screens[scrTimeline].(*timelineScreen)
	m.filters[scrTimeline] = ""
	ts.show(span, ts.laneOfGPU(device, stream), what)
	m.goTo(scrTimeline)
}

// link is where a line of a detail view leads, if anywhere.
type link struct {
	kernel int // kernel row, or -1
	// at, when its End is after its Start, is a place on the timeline
	// (a gap, a chain of kernels) on GPU stream (device, stream).
	at             trace.Span
	device, stream int32
	what           string // what the place is ("the gap", "the chain")
}

var noLink = link{kernel: -1}

func kernelLink(row int) link { return link{kernel: row} }

func (l link) ok() bool { return l.kernel >= 0 || l.at.End > l.at.Start }

func (l link) follow(m *Model) {
	switch {
	case l.kernel >= 0:
		m.showKernel(l.kernel)
	case l.at.End > l.at.Start:
		m.showTimeline(l.at, l.device, l.stream, l.what)
	}
}

// chainPlace finds the first time the kernels named run back to back on
// one stream (a fusion chain's evidence lists them in order) and returns
// their span. ok is false when they never do, as for evidence that lists
// kernels that are not a sequence.
func chainPlace(t *trace.Trace, names []string) (l link, ok bool) {
	n := len(names)
	if n < 2 {
		return noLink, false
	}
	g := t.GPU
outer:
	for i := 0; i+n <= len(g); i++ {
		if g[i].Name != names[0] {
			continue
		}
		for k := 1; k < n; k++ {
			if a := &g[i+k]; a.Name != names[k] || a.Device != g[i].Device || a.Stream != g[i].Stream {
				continue outer
			}
		}
		return link{kernel: -1, at: trace.Span{Start: g[i].Start, End: g[i+n-1].End}, device: g[i].Device, stream: g[i].Stream,
			what: fmt.Sprintf("%d kernels back to back", n)}, true
	}
	return noLink, false
}

// gapPlaces reads an evidence table that lists idle gaps (duration
// columns "at", the gap's start from the first step, and "gap", its
// length, as gpu-idle writes them) into timeline places, one per row;
// nil when the table is not such a list.
func gapPlaces(t *trace.Trace, tb *analyze.Table) []link {
	at, gap := -1, -1
	for i, c := range tb.Columns {
		if c.Kind != analyze.KindDuration {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(c.Name)) {
		case "at":
			at = i
		case "gap":
			gap = i
		}
	}
	if at < 0 || gap < 0 || len(t.Steps) == 0 {
		return nil
	}
	out := make([]link, len(tb.Rows))
	for r, row := range tb.Rows {
		out[r] = noLink
		if at >= len(row) || gap >= len(row) || row[at].Empty() || row[gap].Empty() {
			continue
		}
		// Durations are whole nanoseconds; a value beyond the trace's
		// clock is not a place on it.
		a, g := row[at].Num, row[gap].Num
		if !(a >= 0 && g > 0 && a+g < math.MaxInt64/2) {
			continue
		}
		start := t.Steps[0].Start + trace.Time(a)
		out[r] = link{kernel: -1, at: trace.Span{Start: start, End: start + trace.Time(g)}, device: -1, stream: -1, what: "the gap"}
	}
	return out
}

// showFinding opens finding row's detail on the Findings screen.
func (m *Model) showFinding(row int) {
	fs := m.screens[scrFindings].(*findingsScreen)
	m.filters[scrFindings] = ""
	fs.back()
	fs.tbl.setFilter("")
	fs.tbl.selectRow(row)
	fs.open = row
	fs.build(max(m.width-2, 20))
	m.goTo(scrFindings)
}

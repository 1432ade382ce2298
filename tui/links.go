package tui

import (
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

// placeLink leads to a place analyze's evidence points at (a gap, a
// chain of kernels).
func placeLink(p analyze.Place) link {
	return link{kernel: -1, at: p.Span, device: p.Device, stream: p.Stream, what: p.What}
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

package tui

import (
	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/trace"
)

// Links between screens: a finding names kernels, gaps and chains; the
// timeline names kernels and ops; an op names its callers and kernels.
// Following one pushes where the user was on the back stack (Esc returns
// there), switches screen and puts the cursor on the thing named,
// clearing a filter that would hide it.

// showKernel opens kernel row's detail on the Kernels screen.
func (m *Model) showKernel(row int) {
	m.follow(func() {
		ks := m.screens[scrKernels].(*kernelsScreen)
		m.filters[scrKernels] = ""
		ks.tbl.setFilter("")
		ks.show(row)
		m.goTo(scrKernels)
	})
}

// showOp opens the detail of the op named name (its row of the Ops
// table).
func (m *Model) showOp(name string) {
	os := m.screens[scrOps].(*opsScreen)
	for row := range m.data.res.Ops {
		if m.data.res.Ops[row].Name == name {
			m.follow(func() {
				m.filters[scrOps] = ""
				os.setFilter("")
				os.isTree = false
				os.flat.selectRow(row)
				os.openRow(row, "")
				m.goTo(scrOps)
			})
			return
		}
	}
}

// showTimeline puts the timeline on span, named what, on the lane of GPU
// stream (device, stream) when there is one.
func (m *Model) showTimeline(span trace.Span, device, stream int32, what string) {
	m.follow(func() {
		ts := m.screens[scrTimeline].(*timelineScreen)
		m.filters[scrTimeline] = ""
		ts.show(span, ts.laneOfGPU(device, stream), what)
		m.goTo(scrTimeline)
	})
}

// link is where a line of a detail view leads, if anywhere.
type link struct {
	kernel int // kernel row, or -1
	// at, when its End is after its Start, is a place on the timeline
	// (a gap, a chain of kernels) on GPU stream (device, stream).
	at             trace.Span
	device, stream int32
	what           string // what the place is ("the gap", "the chain")
	// op, when set, is an op's name: the link opens its detail.
	op string
}

var noLink = link{kernel: -1}

func kernelLink(row int) link { return link{kernel: row} }

func opLink(name string) link { return link{kernel: -1, op: name} }

func (l link) ok() bool { return l.kernel >= 0 || l.at.End > l.at.Start || l.op != "" }

func (l link) follow(m *Model) {
	switch {
	case l.kernel >= 0:
		m.showKernel(l.kernel)
	case l.at.End > l.at.Start:
		m.showTimeline(l.at, l.device, l.stream, l.what)
	case l.op != "":
		m.showOp(l.op)
	}
}

// placeLink leads to a place analyze's evidence points at (a gap, a
// chain of kernels).
func placeLink(p analyze.Place) link {
	return link{kernel: -1, at: p.Span, device: p.Device, stream: p.Stream, what: p.What}
}

// showFinding opens finding row's detail on the Findings screen.
func (m *Model) showFinding(row int) {
	m.follow(func() {
		fs := m.screens[scrFindings].(*findingsScreen)
		m.filters[scrFindings] = ""
		fs.back()
		fs.tbl.setFilter("")
		fs.tbl.selectRow(row)
		fs.open = row
		fs.build(max(m.width-2, 20))
		m.goTo(scrFindings)
	})
}

package report

import (
	"fmt"
	"strings"

	"github.com/tracelens/tracelens/analyze"
)

// memoryLiveRows caps the rows of the table of allocations live at the
// peak.
const memoryLiveRows = 10

func bytesText(b int64) string { return analyze.FormatBytes(float64(b)) }

// memory writes "Device memory": per device the allocated (and reserved)
// memory over the trace, the peak, what is live at it by where it was
// allocated, and the growth per step. Absent without [memory] events.
func (d *doc) memory(r *analyze.Result) {
	m := r.Memory
	if m == nil || len(m.Devices) == 0 {
		return
	}
	d.heading(2, "Device memory")
	if len(m.StepStartAllocatedBytes) >= 3 {
		d.para("Allocated at each step's start grows by %s per step (median; from the allocator's [memory] events, profile_memory=True).",
			bytesText(int64(m.GrowthPerStepBytes)))
	}
	for _, dev := range m.Devices {
		d.memoryDevice(dev, len(m.Devices) > 1)
	}
}

// memoryDevice writes one device's peak, chart and live set.
func (d *doc) memoryDevice(dev analyze.MemoryDevice, named bool) {
	if named {
		d.heading(3, fmt.Sprintf("Device %d", dev.Device))
	}
	where := "outside every step"
	if dev.PeakStep >= 0 {
		where = fmt.Sprintf("in step #%d", dev.PeakStep)
	}
	text := fmt.Sprintf("Peak allocated: **%s** at %s (%s), from %d allocator events.", bytesText(dev.PeakAllocatedBytes), us(dev.PeakUs), where, dev.Events)
	if dev.HasReserved {
		text += fmt.Sprintf(" Reserved by the caching allocator at the peak: %s, of which %s (%s) is cached but not allocated "+
			"(fragmentation); most reserved: %s.", bytesText(dev.ReservedAtPeakBytes), bytesText(dev.FragmentationBytes),
			pct(float64(dev.FragmentationBytes)/max(float64(dev.ReservedAtPeakBytes), 1)), bytesText(dev.MaxReservedBytes))
	}
	d.para("%s", text)
	d.chart("", func() string { return memorySVG(dev) })
	if len(dev.PeakLive) == 0 {
		return
	}
	d.para("Allocations live at the peak, by the op (and Python line) that made them, largest first; %s of the peak was allocated "+
		"before the trace began (weights, optimizer state) or is not matched by address.", bytesText(dev.PeakUnattributedBytes))
	tb := newTable(left("Allocated in"), right("Live at the peak"), right("Share of the peak"), right("Blocks"))
	for _, s := range dev.PeakLive[:min(len(dev.PeakLive), memoryLiveRows)] {
		tb.add(Code(s.Site), bytesText(s.Bytes), pct(float64(s.Bytes)/max(float64(dev.PeakAllocatedBytes), 1)), fmt.Sprint(s.Blocks))
	}
	if n := len(dev.PeakLive) - memoryLiveRows; n > 0 {
		var rest int64
		for _, s := range dev.PeakLive[memoryLiveRows:] {
			rest += s.Bytes
		}
		tb.add(fmt.Sprintf("(%d more sites)", n), bytesText(rest), pct(float64(rest)/max(float64(dev.PeakAllocatedBytes), 1)), "")
	}
	d.table(tb)
}

// memorySVG draws allocated (solid) and reserved (dashed) memory over
// time, with the peak marked.
func memorySVG(dev analyze.MemoryDevice) string {
	if len(dev.Points) < 2 {
		return ""
	}
	const width, height, left, bottom, top = 960, 260, 80, 30, 34
	plotW, plotH := float64(width-left-10), float64(height-top-bottom)
	t0, t1 := dev.Points[0].AtUs, dev.Points[len(dev.Points)-1].AtUs
	maxB := float64(max(dev.PeakAllocatedBytes, dev.MaxReservedBytes))
	if t1 <= t0 || maxB <= 0 {
		return ""
	}
	x := func(at float64) float64 { return float64(left) + (at-t0)/(t1-t0)*plotW }
	y := func(b int64) float64 { return float64(top) + plotH - float64(b)/maxB*plotH }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" role="img" viewBox="0 0 %d %d" width="%d" height="%d">`, width, height, width, height)
	title := "Device memory: allocated (solid)"
	if dev.HasReserved {
		title += " and reserved (dashed)"
	}
	fmt.Fprintf(&b, `<title>%s</title><text class="title" x="0" y="18">%s</text>`, esc(title), esc(title))
	for i := 0; i <= 4; i++ {
		v := int64(maxB * float64(i) / 4)
		fmt.Fprintf(&b, `<line class="grid" x1="%d" y1="%.1f" x2="%.1f" y2="%.1f"/>`, left, y(v), float64(left)+plotW, y(v))
		fmt.Fprintf(&b, `<text class="tick" x="%d" y="%.1f" text-anchor="end">%s</text>`, left-6, y(v)+4, esc(bytesText(v)))
	}
	fmt.Fprintf(&b, `<text class="tick" x="%d" y="%d">%s</text>`, left, height-8, esc(us(t0)))
	fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%d" text-anchor="end">%s</text>`, float64(left)+plotW, height-8, esc(us(t1)))
	line := func(class string, v func(analyze.MemoryPoint) int64) {
		fmt.Fprintf(&b, `<polyline class="%s" points="`, class)
		for i, p := range dev.Points {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%.1f,%.1f", x(p.AtUs), y(v(p)))
		}
		b.WriteString(`"/>`)
	}
	if dev.HasReserved {
		line("idle", func(p analyze.MemoryPoint) int64 { return p.ReservedBytes })
	}
	line("roof", func(p analyze.MemoryPoint) int64 { return p.AllocatedBytes })
	fmt.Fprintf(&b, `<circle class="point" cx="%.1f" cy="%.1f" r="4"><title>peak: %s allocated at %s</title></circle>`,
		x(dev.PeakUs), y(dev.PeakAllocatedBytes), esc(bytesText(dev.PeakAllocatedBytes)), esc(us(dev.PeakUs)))
	b.WriteString(`</svg>`)
	return b.String()
}

package report

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/trace"
)

// The charts are hand-written SVG so the HTML report needs no JavaScript
// and no network. Colours come from CSS classes (see page.css) so one chart
// reads in light mode, dark mode and print; text uses currentColor. Every
// string from the trace is XML-escaped with esc.

func esc(s string) string { return html.EscapeString(sanitize(s)) }

// categoryClass maps an analyze category to the CSS class of its colour.
// Unknown categories share the "other" colour instead of getting a class
// built from untrusted text.
func categoryClass(c string) string {
	switch c {
	case analyze.CategoryGEMM, analyze.CategoryGEMV, analyze.CategoryConv, analyze.CategoryAttention,
		analyze.CategoryElementwise, analyze.CategoryReduction, analyze.CategoryRNG, analyze.CategoryCopy,
		analyze.CategoryMemset, analyze.CategoryCommunication, analyze.CategoryTriton, analyze.CategoryCustom:
		return "c-" + c
	}
	return "c-other"
}

// bar is one bar of a horizontal bar chart.
type bar struct {
	label string // from the trace: escaped when drawn
	value float64
	text  string // the value as shown next to the bar
	class string // CSS colour class
}

// barsSVG draws labelled horizontal bars scaled to the largest value.
func barsSVG(title string, bars []bar) string {
	if len(bars) == 0 {
		return ""
	}
	const width, labelW, textW, rowH, top = 960, 380, 110, 22, 30
	h := top + rowH*len(bars) + 8
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" role="img" viewBox="0 0 %d %d" width="%d" height="%d">`, width, h, width, h)
	fmt.Fprintf(&b, `<title>%s</title><text class="title" x="0" y="18">%s</text>`, esc(title), esc(title))
	maxV := 0.0
	for _, br := range bars {
		maxV = max(maxV, br.value)
	}
	span := float64(width - labelW - textW)
	for i, br := range bars {
		y := top + i*rowH
		w := 0.0
		if maxV > 0 {
			w = math.Max(br.value/maxV*span, 1)
		}
		fmt.Fprintf(&b, `<text class="label" x="%d" y="%d" text-anchor="end">%s</text>`, labelW-8, y+15, esc(shorten(br.label, 52)))
		fmt.Fprintf(&b, `<rect class="%s" x="%d" y="%d" width="%.1f" height="%d"><title>%s: %s</title></rect>`, br.class, labelW, y+3, w, rowH-6, esc(br.label), esc(br.text))
		fmt.Fprintf(&b, `<text class="value" x="%.1f" y="%d">%s</text>`, float64(labelW)+w+6, y+15, esc(br.text))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// stepsSVG draws each step as a column: GPU busy at the bottom, idle on
// top, so launch-bound steps read as mostly hollow columns.
func stepsSVG(steps []analyze.Step) string {
	if len(steps) == 0 {
		return ""
	}
	const width, height, left, bottom, top = 960, 260, 70, 40, 34
	plotW, plotH := float64(width-left-10), float64(height-top-bottom)
	maxV := 0.0
	for _, s := range steps {
		maxV = max(maxV, s.WallUs, s.GPUBusyUs)
	}
	if maxV <= 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" role="img" viewBox="0 0 %d %d" width="%d" height="%d">`, width, height, width, height)
	b.WriteString(`<title>Step time: GPU busy and idle</title><text class="title" x="0" y="18">Step time: GPU busy (filled) and idle (outline)</text>`)
	axisY(&b, left, top, plotW, plotH, maxV)
	slot := plotW / float64(len(steps))
	bw := math.Min(slot*0.7, 80)
	for i, s := range steps {
		x := float64(left) + slot*float64(i) + (slot-bw)/2
		wallH := s.WallUs / maxV * plotH
		busyH := math.Min(s.GPUBusyUs, s.WallUs) / maxV * plotH
		base := float64(top) + plotH
		fmt.Fprintf(&b, `<rect class="idle" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>step %d: wall %s, GPU idle %s</title></rect>`,
			x, base-wallH, bw, wallH, s.Number, us(s.WallUs), us(s.GPUIdleUs))
		fmt.Fprintf(&b, `<rect class="busy" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>step %d: GPU busy %s</title></rect>`,
			x, base-busyH, bw, busyH, s.Number, us(s.GPUBusyUs))
		if len(steps) <= 40 || i%((len(steps)+39)/40) == 0 {
			fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%.1f" text-anchor="middle">#%d</text>`, x+bw/2, base+16, s.Number)
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// axisY draws a linear time axis with four gridlines labelled in readable
// durations.
func axisY(b *strings.Builder, left, top int, plotW, plotH, maxUs float64) {
	for i := 0; i <= 4; i++ {
		v := maxUs * float64(i) / 4
		y := float64(top) + plotH - plotH*float64(i)/4
		fmt.Fprintf(b, `<line class="grid" x1="%d" y1="%.1f" x2="%.1f" y2="%.1f"/>`, left, y, float64(left)+plotW, y)
		fmt.Fprintf(b, `<text class="tick" x="%d" y="%.1f" text-anchor="end">%s</text>`, left-6, y+4, us(v))
	}
}

// timelineSVG draws one lane per GPU stream (and one for the host threads'
// launch calls) over the trace span, with step boundaries, so gaps between
// kernels, i.e. GPU idle time, are visible. Activities narrower than a
// pixel are merged, so the chart stays small for million-kernel traces.
func timelineSVG(t *trace.Trace, category map[string]string) string {
	if len(t.GPU) == 0 {
		return ""
	}
	lanes, lo, hi := timelineLanes(t, category)
	const width, left, laneH, top = 960, 150, 26, 34
	plotW := float64(width - left - 10)
	height := top + laneH*len(lanes) + 30
	x := func(at trace.Time) float64 { return float64(left) + float64(at-lo)/float64(hi-lo)*plotW }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" role="img" viewBox="0 0 %d %d" width="%d" height="%d">`, width, height, width, height)
	fmt.Fprintf(&b, `<title>Timeline</title><text class="title" x="0" y="18">Timeline per stream over %s (gaps are GPU idle)</text>`, esc(trace.Duration(hi-lo).String()))
	for i, s := range t.Steps {
		if s.Synthetic {
			continue
		}
		x0, x1 := x(s.Start), x(s.End)
		if i%2 == 0 {
			fmt.Fprintf(&b, `<rect class="band" x="%.1f" y="%d" width="%.1f" height="%d"/>`, x0, top-4, x1-x0, laneH*len(lanes)+4)
		}
		fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%d" text-anchor="middle">#%d</text>`, (x0+x1)/2, top+laneH*len(lanes)+14, s.Number)
	}
	for i, l := range lanes {
		y := top + i*laneH
		fmt.Fprintf(&b, `<text class="label" x="%d" y="%d" text-anchor="end">%s</text>`, left-8, y+16, esc(l.name))
		fmt.Fprintf(&b, `<line class="grid" x1="%d" y1="%d" x2="%.1f" y2="%d"/>`, left, y+laneH-2, float64(left)+plotW, y+laneH-2)
		drawLane(&b, l, y+3, laneH-8, x)
	}
	fmt.Fprintf(&b, `<text class="tick" x="%d" y="%d">0</text><text class="tick" x="%.1f" y="%d" text-anchor="end">%s</text>`,
		left, height-4, float64(left)+plotW, height-4, esc(trace.Duration(hi-lo).String()))
	b.WriteString(`</svg>`)
	return b.String()
}

// timelineLane is one row of the timeline: its spans in time order and
// each one's CSS class (its kernel category).
type timelineLane struct {
	name  string
	spans []trace.Span
	class []string
}

// timelineLanes are the timeline's rows: the host threads' launch calls
// (when any launched GPU work), then one per device and stream in order
// of first activity; lo and hi bound them and the marked steps.
func timelineLanes(t *trace.Trace, category map[string]string) (lanes []*timelineLane, lo, hi trace.Time) {
	byKey := map[[2]int32]*timelineLane{}
	lo, hi = t.GPU[0].Start, t.GPU[0].End
	for i := range t.GPU {
		g := &t.GPU[i]
		k := [2]int32{g.Device, g.Stream}
		l := byKey[k]
		if l == nil {
			l = &timelineLane{name: fmt.Sprintf("GPU %d stream %d", g.Device, g.Stream)}
			byKey[k] = l
			lanes = append(lanes, l)
		}
		l.spans = append(l.spans, g.Span)
		c := analyze.CategoryCopy
		switch g.Kind {
		case trace.Kernel:
			c = category[g.Name]
		case trace.Memset:
			c = analyze.CategoryMemset
		}
		l.class = append(l.class, categoryClass(c))
		lo, hi = min(lo, g.Start), max(hi, g.End)
	}
	host := &timelineLane{name: "host launch calls"}
	for i := range t.APICalls {
		a := &t.APICalls[i]
		if a.FirstGPU == trace.None {
			continue
		}
		host.spans = append(host.spans, a.Span)
		host.class = append(host.class, "c-host")
		lo, hi = min(lo, a.Start), max(hi, a.End)
	}
	if len(host.spans) > 0 {
		slices.SortStableFunc(host.spans, func(a, b trace.Span) int { return int(a.Start - b.Start) })
		lanes = append([]*timelineLane{host}, lanes...)
	}
	for _, s := range t.Steps {
		if !s.Synthetic {
			lo, hi = min(lo, s.Start), max(hi, s.End)
		}
	}
	if hi <= lo {
		hi = lo + 1
	}
	return lanes, lo, hi
}

// drawLane draws a lane's spans as rects at y, h high, merging spans that
// touch at pixel resolution so the chart stays small for million-kernel
// traces.
func drawLane(b *strings.Builder, l *timelineLane, y, h int, x func(trace.Time) float64) {
	var x0, x1 float64
	cls := ""
	open := false
	flush := func() {
		if open {
			fmt.Fprintf(b, `<rect class="%s" x="%.1f" y="%d" width="%.1f" height="%d"/>`, cls, x0, y, math.Max(x1-x0, 0.6), h)
		}
	}
	for j, s := range l.spans {
		a, e := x(s.Start), x(s.End)
		if open && a <= x1+0.5 {
			x1 = math.Max(x1, e)
			continue
		}
		flush()
		x0, x1, cls, open = a, e, l.class[j], true
	}
	flush()
}

// rooflineSVG plots achieved TFLOP/s against arithmetic intensity on log
// axes under the device's two roofs (bandwidth slope, compute ceiling).
func rooflineSVG(rows []analyze.RooflineRow) string {
	// pts keeps each row's table position so point labels match the table.
	type point struct {
		analyze.RooflineRow
		n int
	}
	var pts []point
	peakF, peakB := 0.0, 0.0
	for i, r := range rows {
		if r.Intensity > 0 && r.TFLOPS > 0 {
			pts = append(pts, point{r, i + 1})
			peakF, peakB = max(peakF, r.PeakTFLOPS), max(peakB, r.PeakGBps)
		}
	}
	if len(pts) == 0 || peakF <= 0 || peakB <= 0 {
		return ""
	}
	ridge := peakF * 1e12 / (peakB * 1e9)
	// Frame the points and the ridge with a decade of margin, so the roof's
	// knee and every point are visible without empty decades.
	xmin, xmax, ymin := ridge, ridge, peakF
	for _, p := range pts {
		xmin, xmax = math.Min(xmin, p.Intensity), math.Max(xmax, p.Intensity)
		ymin = math.Min(ymin, p.TFLOPS)
	}
	xmin, xmax, ymin = xmin/10, xmax*10, ymin/10
	ymax := peakF * 2
	lx0, lx1 := math.Floor(math.Log10(xmin)), math.Ceil(math.Log10(xmax))
	ly0, ly1 := math.Floor(math.Log10(ymin)), math.Ceil(math.Log10(ymax))
	const width, height, left, top, bottom, rightPad = 960, 420, 80, 34, 46, 20
	pw, ph := float64(width-left-rightPad), float64(height-top-bottom)
	px := func(v float64) float64 { return float64(left) + (math.Log10(v)-lx0)/(lx1-lx0)*pw }
	py := func(v float64) float64 { return float64(top) + ph - (math.Log10(v)-ly0)/(ly1-ly0)*ph }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" role="img" viewBox="0 0 %d %d" width="%d" height="%d">`, width, height, width, height)
	fmt.Fprintf(&b, `<title>Roofline</title><text class="title" x="0" y="18">Roofline: %.0f TFLOP/s peak, %.0f GB/s, ridge at %.0f FLOP/byte</text>`, peakF, peakB, ridge)
	for e := lx0; e <= lx1; e++ {
		v := math.Pow(10, e)
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" y1="%d" x2="%.1f" y2="%.1f"/><text class="tick" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`,
			px(v), top, px(v), float64(top)+ph, px(v), float64(top)+ph+16, num(v))
	}
	for e := ly0; e <= ly1; e++ {
		v := math.Pow(10, e)
		fmt.Fprintf(&b, `<line class="grid" x1="%d" y1="%.1f" x2="%.1f" y2="%.1f"/><text class="tick" x="%d" y="%.1f" text-anchor="end">%s</text>`,
			left, py(v), float64(left)+pw, py(v), left-6, py(v)+4, num(v))
	}
	fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%d" text-anchor="middle">arithmetic intensity (FLOP/byte)</text>`, float64(left)+pw/2, height-6)
	fmt.Fprintf(&b, `<text class="tick" transform="translate(14 %.1f) rotate(-90)" text-anchor="middle">TFLOP/s</text>`, float64(top)+ph/2)
	// The roof: bandwidth slope up to the ridge, then the compute ceiling.
	x0 := math.Pow(10, lx0)
	y0 := peakB * 1e9 * x0 / 1e12
	if y0 < math.Pow(10, ly0) {
		x0 = math.Pow(10, ly0) * 1e12 / (peakB * 1e9)
		y0 = math.Pow(10, ly0)
	}
	fmt.Fprintf(&b, `<polyline class="roof" points="%.1f,%.1f %.1f,%.1f %.1f,%.1f"/>`, px(x0), py(y0), px(ridge), py(peakF), float64(left)+pw, py(peakF))
	var placed [][2]float64
	for _, p := range pts {
		cx, cy := px(p.Intensity), py(p.TFLOPS)
		fmt.Fprintf(&b, `<circle class="point" cx="%.1f" cy="%.1f" r="6"><title>%d. %s %s: %.1f TFLOP/s at %.1f FLOP/byte</title></circle>`,
			cx, cy, p.n, esc(p.Op), esc(p.Shape), p.TFLOPS, p.Intensity)
		// Nudge a label down until it clears the labels already placed, so
		// points of equal intensity stay readable. Each move must go down:
		// in floating point, (q+13)−q can round below 13, and a label one
		// line under q would then be "too close" to it forever.
		lx, ly := cx+9, cy+4
		for moved := true; moved; {
			moved = false
			for _, q := range placed {
				if math.Abs(q[0]-lx) < 24 && math.Abs(q[1]-ly) < 13 && q[1]+13 > ly {
					ly = q[1] + 13
					moved = true
				}
			}
		}
		placed = append(placed, [2]float64{lx, ly})
		fmt.Fprintf(&b, `<text class="label" x="%.1f" y="%.1f">%d</text>`, lx, ly, p.n)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// num formats an axis value compactly (0.001, 0.1, 10, 1k, 10k).
func num(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%gk", v/1e3)
	}
	return fmt.Sprintf("%g", v)
}

package tui

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/tracelens/tracelens/fixtures"
	"github.com/tracelens/tracelens/fixtures/synth"
	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
)

// benchModel loads a synthetic trace of kernels distinct kernels into a
// 120×40 model that renders with colour (the costlier path).
func benchModel(b *testing.B, kernels, launches int) *Model {
	b.Helper()
	tr := syntheticTrace(kernels, launches)
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI)
	return loaded(b, Options{Name: "synthetic", Load: func(func(int64, int64)) (*trace.Trace, error) { return tr, nil }, Renderer: r}, 120, 40)
}

// BenchmarkKeypress measures one keypress (Update and the View that
// follows it) on a trace with 10 000 distinct kernels. The target is
// 16 ms, one frame at 60 Hz.
func BenchmarkKeypress(b *testing.B) {
	m := benchModel(b, 10000, 2)
	cases := []struct {
		name   string
		screen string
		keys   []string // cycled through, one per iteration
	}{
		{"kernels_down", "2", []string{"j"}},
		{"kernels_pgdown_pgup", "2", []string{"pgdown", "pgdown", "pgup", "pgup"}},
		{"kernels_sort", "2", []string{"s"}},
		{"kernels_filter_typing", "2", []string{"/", "1", "2", "backspace", "backspace", "enter"}},
		{"kernels_open_detail", "2", []string{"enter", "esc"}},
		{"ops_tree", "3", []string{"t", "enter", "down"}},
		{"timeline_pan_zoom", "5", []string{"l", "+", "h", "-", "right"}},
		{"switch_screens", "1", []string{"tab"}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			press(m, "esc", "esc", c.screen)
			m.View()
			i := 0
			for b.Loop() {
				m.Update(keyPress(c.keys[i%len(c.keys)]))
				_ = m.View()
				i++
			}
		})
	}
}

// BenchmarkFirstFrame measures what happens between the end of ingest and
// the first interactive frame: analysis, every precomputed table, one View.
func BenchmarkFirstFrame(b *testing.B) {
	for _, sz := range []struct {
		name              string
		kernels, launches int
	}{{"10k_kernels", 10000, 2}, {"200k_launches", 1000, 200}} {
		b.Run(sz.name, func(b *testing.B) {
			tr := syntheticTrace(sz.kernels, sz.launches)
			for b.Loop() {
				m := New(Options{Renderer: plainRenderer()})
				d, err := buildData(tr, nil)
				if err != nil {
					b.Fatal(err)
				}
				m.Update(loadedMsg{d: d, screens: newScreens(d)})
				_ = m.View()
			}
		})
	}
}

// bigTrace reads the trace named by TRACELENS_BIG_TRACE (make the 513 MB
// one with go run ./fixtures/gen -size 500MB -o /tmp/big.json), or else
// generates 50 MB of copies of the default fixture in memory.
func bigTrace(b *testing.B) *trace.Trace {
	b.Helper()
	if path := os.Getenv("TRACELENS_BIG_TRACE"); path != "" {
		t, err := ingest.ReadFile(path, ingest.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return t
	}
	raw, err := fixtures.Bytes(fixtures.Default)
	if err != nil {
		b.Fatal(err)
	}
	tmpl, err := synth.ParseGzip(raw)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := tmpl.Write(&buf, 50<<20); err != nil {
		b.Fatal(err)
	}
	t, err := ingest.Read(&buf, "big.json", ingest.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return t
}

// BenchmarkKeypressBigTrace measures keypress → frame (Update and View,
// 120×40, colour) on a big real-shaped trace: every screen, including the
// timeline's host and annotation lanes at whole-trace zoom, where each
// column summarises the most events. Target: 16 ms.
func BenchmarkKeypressBigTrace(b *testing.B) {
	tr := bigTrace(b)
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI256)
	m := loaded(b, Options{Name: "big.json", Load: func(func(int64, int64)) (*trace.Trace, error) { return tr, nil }, Renderer: r}, 120, 40)
	b.Logf("%d GPU activities, %d ops, %d Python frames, %d steps, %d timeline lanes", len(tr.GPU), len(tr.Ops), len(tr.Frames), len(tr.Steps),
		len(m.screens[scrTimeline].(*timelineScreen).lanes))
	cases := []struct {
		name   string
		screen string
		keys   []string
	}{
		{"overview_down", "1", []string{"j", "j", "k", "k"}},
		{"kernels_sort", "2", []string{"s"}},
		{"kernels_filter_typing", "2", []string{"/", "g", "e", "backspace", "backspace", "enter"}},
		{"ops_tree", "3", []string{"t", "enter", "down"}},
		{"findings_open", "4", []string{"enter", "esc", "down"}},
		{"timeline_whole_cursor", "5", []string{"a", "right", "l", "h"}},
		{"timeline_lanes", "5", []string{"a", "down", "down", "up", "up"}},
		{"timeline_zoom_pan", "5", []string{"+", ">", "-", "<"}},
		{"timeline_steps", "5", []string{"]"}},
		{"switch_screens", "1", []string{"tab"}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			press(m, "esc", "esc", c.screen)
			m.View()
			i := 0
			for b.Loop() {
				m.Update(keyPress(c.keys[i%len(c.keys)]))
				_ = m.View()
				i++
			}
		})
	}
}

// BenchmarkFirstFrameBigTrace measures what the user waits for between
// the end of ingest and the first frame on a big trace: analysis, every
// screen's tables, the timeline's lanes, one View.
func BenchmarkFirstFrameBigTrace(b *testing.B) {
	tr := bigTrace(b)
	for b.Loop() {
		m := New(Options{Renderer: plainRenderer()})
		d, err := buildData(tr, nil)
		if err != nil {
			b.Fatal(err)
		}
		m.Update(loadedMsg{d: d, screens: newScreens(d)})
		_ = m.View()
	}
}

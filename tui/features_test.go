package tui

import (
	"encoding/json"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
)

// recordedOptions opens a trace of fixtures/recorded (not embedded in
// the binary).
func recordedOptions(name string) Options {
	path := "../fixtures/recorded/" + name
	return Options{Name: name, Renderer: plainRenderer(), Load: func(progress func(read, total int64)) (*trace.Trace, error) {
		return ingest.ReadFile(path, ingest.Options{Progress: progress})
	}}
}

func diffOptions() Options {
	o := fixtureOptions("eggroll_direct.json.gz")
	o.BaseName, o.LoadBase = "eggroll_hooks.json.gz", fixtureLoader("eggroll_hooks.json.gz")
	return o
}

func TestBaseNewOpensOnTheDiff(t *testing.T) {
	m := loaded(t, diffOptions(), 120, 40)
	if m.cur != scrDiff {
		t.Fatalf("tui BASE NEW opens on screen %d, want the diff", m.cur+1)
	}
	if v := m.View(); !strings.Contains(v, "[6 Diff]") || !strings.Contains(v, "BASE eggroll_hooks.json.gz") {
		t.Errorf("first frame of a diff:\n%s", v)
	}
	if one := loaded(t, fixtureOptions("eggroll_hooks.json.gz"), 120, 40); one.cur != scrOverview {
		t.Errorf("one trace opens on screen %d, want the overview", one.cur+1)
	}
}

// timelineExpected is what tui/testdata/timeline_expect.py computes from
// the trace JSON.
type timelineExpected struct {
	GPUBusy    []int64  `json:"gpu_busy_ns"`
	OpsBusy    []int64  `json:"ops_busy_ns"`
	PythonBusy []int64  `json:"python_busy_ns"`
	RangeBusy  []int64  `json:"range_busy_ns"`
	GPURange   []int64  `json:"gpu_range_busy_ns"`
	Steps      int      `json:"steps"`
	LongestGap []int64  `json:"longest_gap_ns"`
	_          struct{} // keep keyed literals
}

// laneGPURangeForTest tells GPU-side range lanes from host ones.
const laneGPURangeForTest laneKind = 100

func readTimelineExpected(t *testing.T) map[string]timelineExpected {
	t.Helper()
	b, err := os.ReadFile("testdata/timeline_expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]timelineExpected
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	return want
}

// TestTimelineLanes checks the lanes of real traces against the Python
// computation: one lane per GPU stream, per host thread with ops, per
// thread with Python frames, per thread with user ranges, and a steps
// lane, each busy for the union of its intervals.
func TestTimelineLanes(t *testing.T) {
	for name, want := range readTimelineExpected(t) {
		t.Run(name, func(t *testing.T) {
			opts := recordedOptions(name)
			if strings.HasPrefix(name, "eggroll") {
				opts = fixtureOptions(name)
			}
			m := loaded(t, opts, 120, 40)
			ts := m.screens[scrTimeline].(*timelineScreen)
			got := map[laneKind][]int64{}
			steps := 0
			for i := range ts.lanes {
				l := &ts.lanes[i]
				if l.kind == laneSteps {
					steps = l.n
					continue
				}
				kind := l.kind
				if kind == laneRange && strings.HasPrefix(l.what, "ranges on GPU") {
					kind = laneGPURangeForTest
				}
				got[kind] = append(got[kind], int64(l.prefix[len(l.prefix)-1]))
			}
			for _, c := range []struct {
				kind laneKind
				want []int64
			}{{laneGPU, want.GPUBusy}, {laneOps, want.OpsBusy}, {lanePy, want.PythonBusy}, {laneRange, want.RangeBusy}, {laneGPURangeForTest, want.GPURange}} {
				slices.Sort(got[c.kind])
				if !slices.Equal(got[c.kind], c.want) {
					t.Errorf("lane kind %d busy ns %v, want %v", c.kind, got[c.kind], c.want)
				}
			}
			if steps != want.Steps {
				t.Errorf("steps lane has %d steps, want %d", steps, want.Steps)
			}
			// Every lane shows on the screen, in kind order.
			press(m, "5")
			v := m.View()
			for _, l := range ts.lanes {
				if !strings.Contains(v, l.label+" ") && !strings.Contains(v, l.label+"|") {
					t.Errorf("lane %q not on screen:\n%s", l.label, v)
				}
			}
		})
	}
}

// TestTimelineFilterKeepsLanes: / on the timeline keeps the lanes whose
// name matches.
func TestTimelineFilterKeepsLanes(t *testing.T) {
	m := loaded(t, recordedOptions("train_sync_pageable.json.gz"), 120, 40)
	press(m, "5", "/", "o", "p", "s", "enter")
	ts := m.screens[scrTimeline].(*timelineScreen)
	if len(ts.shown) != 2 {
		t.Fatalf("filter ops keeps %d lanes, want the 2 threads' ops lanes", len(ts.shown))
	}
	for _, i := range ts.shown {
		if ts.lanes[i].kind != laneOps {
			t.Errorf("filter ops kept lane %q", ts.lanes[i].label)
		}
	}
	v := m.View()
	if strings.Contains(v, "gpu0 s7") || !strings.Contains(v, `filter "ops"`) {
		t.Errorf("filtered timeline:\n%s", v)
	}
	press(m, "esc")
	if len(ts.shown) != len(ts.lanes) {
		t.Errorf("Esc leaves %d of %d lanes", len(ts.shown), len(ts.lanes))
	}
}

// TestFilterMatchesVisibleColumns: / matches what the user sees in any
// column, not only the name (the category of a kernel, the severity of
// a finding, the analyzer).
func TestFilterMatchesVisibleColumns(t *testing.T) {
	m := loaded(t, fixtureOptions("eggroll_hooks.json.gz"), 120, 40)
	ks := m.screens[scrKernels].(*kernelsScreen)
	press(m, "2", "/", "r", "n", "g", "enter")
	want := 0
	for _, k := range ks.d.kernels {
		if k.Category == analyze.CategoryRNG || strings.Contains(strings.ToLower(k.full), "rng") {
			want++
		}
	}
	if want == 0 || len(ks.tbl.view) != want {
		t.Errorf("/rng shows %d kernels, want the %d whose category or name says rng", len(ks.tbl.view), want)
	}
	// The overview lists findings: / filters them too.
	press(m, "1", "/", "m", "e", "d", "i", "u", "m", "enter")
	ov := m.screens[scrOverview].(*overviewScreen)
	want = 0
	for _, f := range m.data.res.Findings {
		if f.Severity == analyze.Medium || strings.Contains(strings.ToLower(f.Title), "medium") {
			want++
		}
	}
	if len(ov.findings.view) != want || want == 0 {
		t.Errorf("overview /medium shows %d findings, want %d", len(ov.findings.view), want)
	}
	// Findings by analyzer id.
	press(m, "4", "/", "f", "u", "s", "i", "o", "n", "-", "enter")
	fs := m.screens[scrFindings].(*findingsScreen)
	if len(fs.tbl.view) != 1 || fs.d.res.Findings[fs.tbl.view[0]].ID != "fusion-candidate" {
		t.Errorf("findings /fusion- shows %v", fs.tbl.view)
	}
}

// TestTimelineEnterOpensKernel: Enter with the cursor on a kernel opens
// its detail on screen 2.
func TestTimelineEnterOpensKernel(t *testing.T) {
	m := loaded(t, fixtureOptions("eggroll_hooks.json.gz"), 120, 40)
	press(m, "5")
	m.View()
	ts := m.screens[scrTimeline].(*timelineScreen)
	l, i := ts.underCursor()
	if i < 0 || l.kind != laneGPU {
		t.Fatalf("first frame's cursor is not on a kernel")
	}
	name := m.data.t.GPU[l.ref(i)].Name
	press(m, "enter")
	ks := m.screens[scrKernels].(*kernelsScreen)
	if m.cur != scrKernels || ks.detail == nil {
		t.Fatalf("Enter on a kernel: screen %d, detail open %v", m.cur+1, ks.detail != nil)
	}
	if row, _ := ks.tbl.selected(); ks.d.kernels[row].Name != name {
		t.Errorf("opened %q, want %q", ks.d.kernels[row].Name, name)
	}
	// h and l move the cursor like ← and →; < and > pan.
	press(m, "5")
	c, win := ts.cur, ts.win
	press(m, "l", "l", "h")
	if ts.cur != c+1 || ts.win != win {
		t.Errorf("l l h: cursor %d → %d, window moved %v; want one column right, same window", c, ts.cur, ts.win != win)
	}
	press(m, "+", "+", ">")
	if ts.win.Start <= win.Start {
		t.Errorf("> did not pan right")
	}
}

// openFinding opens the finding with analyzer id on screen 4.
func openFinding(t *testing.T, m *Model, id string) *findingsScreen {
	t.Helper()
	for i, f := range m.data.res.Findings {
		if f.ID == id {
			m.showFinding(i)
			return m.screens[scrFindings].(*findingsScreen)
		}
	}
	t.Fatalf("no %s finding", id)
	return nil
}

// followToTimeline presses Enter on the first line of the open finding
// whose link matches and expects the timeline.
func followToTimeline(t *testing.T, m *Model, fs *findingsScreen, match func(link) bool) *timelineScreen {
	t.Helper()
	row := slices.IndexFunc(fs.lines.links, match)
	if row < 0 {
		t.Fatal("the finding has no such timeline link")
	}
	fs.detail.selectRow(row)
	press(m, "enter")
	if m.cur != scrTimeline {
		t.Fatalf("Enter on a timeline link: screen %d", m.cur+1)
	}
	return m.screens[scrTimeline].(*timelineScreen)
}

// TestFindingChainJumpsToTimeline follows a fusion chain's link: the
// timeline lands on the chain, and the kernels from the cursor on are
// the ones the evidence names, in order.
func TestFindingChainJumpsToTimeline(t *testing.T) {
	for _, name := range []string{"sincos_eager.json.gz", "fp64_simulation.json.gz"} {
		t.Run(name, func(t *testing.T) {
			m := loaded(t, recordedOptions(name), 120, 40)
			fs := openFinding(t, m, "fusion-candidate")
			var chain []string
			for _, e := range m.data.res.Findings[fs.open].Evidence {
				if len(e.Kernels) > 1 {
					chain = e.Kernels
				}
			}
			ts := followToTimeline(t, m, fs, func(l link) bool { return l.kernel < 0 && l.ok() })
			m.View()
			l, i := ts.underCursor()
			if i < 0 || l.kind != laneGPU {
				t.Fatalf("cursor not on a GPU activity")
			}
			g := l.ref(i)
			for k, want := range chain {
				if got := m.data.t.GPU[g+k].Name; got != want {
					t.Fatalf("kernel %d from the cursor is %s, want %s", k, got, want)
				}
			}
			if v := m.View(); !strings.Contains(v, "GPU 0 stream") {
				t.Errorf("readout does not name the stream:\n%s", v)
			}
		})
	}
}

// TestFindingGapJumpsToTimeline follows the first gap of a gpu-idle
// finding: the timeline lands on exactly the longest gap, which
// timeline_expect.py computes from the JSON.
func TestFindingGapJumpsToTimeline(t *testing.T) {
	all := readTimelineExpected(t)
	for _, name := range []string{"train_sync_pageable.json.gz", "transformer_naive_attn.json.gz"} {
		t.Run(name, func(t *testing.T) {
			want := all[name].LongestGap
			m := loaded(t, recordedOptions(name), 120, 40)
			fs := openFinding(t, m, "gpu-idle")
			ts := followToTimeline(t, m, fs, func(l link) bool { return l.kernel < 0 && l.ok() })
			got := fs.lines.links[slices.IndexFunc(fs.lines.links, func(l link) bool { return l.kernel < 0 && l.ok() })].at
			if int64(got.Start) != want[0] || int64(got.End) != want[1] {
				t.Errorf("gap %d–%d (%s), want %d–%d", got.Start, got.End, got.Dur(), want[0], want[1])
			}
			if ts.win.Start > got.Start || ts.win.End < got.End {
				t.Errorf("window %v does not show the gap %v", ts.win, got)
			}
			m.View()
			if l, i := ts.underCursor(); l.kind != laneGPU || i >= 0 {
				t.Errorf("cursor is not on an idle GPU lane")
			}
		})
	}
}

// TestFindingDetailWrapsTitle: a long title wraps whole on a narrow
// terminal and the status line counts findings.
func TestFindingDetailWrapsTitle(t *testing.T) {
	m := loaded(t, fixtureOptions("eggroll_hooks.json.gz"), 60, 30)
	fs := openFinding(t, m, "launch-bound")
	v := m.View()
	title := m.data.res.Findings[fs.open].Title
	var lines []string
	for i, k := range fs.lines.kinds {
		if k == lineTitle {
			lines = append(lines, fs.lines.lines[i])
		}
	}
	if len(lines) < 2 || strings.Join(lines, " ") != title {
		t.Errorf("title lines %q, want %q wrapped", lines, title)
	}
	for _, l := range lines {
		if !strings.Contains(v, l) {
			t.Errorf("screen lacks title line %q:\n%s", l, v)
		}
	}
	if want := "finding 1/4"; !strings.Contains(v, want) {
		t.Errorf("status line lacks %q:\n%s", want, v)
	}
}

// TestOccupancyDash: Kineto writes occupancy 0 for cluster launches and
// nothing (-1) when it has none: the kernel detail shows "—", not "0%".
func TestOccupancyDash(t *testing.T) {
	tr := syntheticTrace(3, 2)
	tr.GPU[0].Occupancy = 0
	tr.GPU[3].Occupancy = 0
	tr.GPU[1].Occupancy = 62.5
	tr.GPU[4].Occupancy = 62.5
	opts := Options{Name: "synthetic", Load: func(func(int64, int64)) (*trace.Trace, error) { return tr, nil }, Renderer: plainRenderer()}
	m := loaded(t, opts, 120, 60)
	for k, want := range map[int]string{0: "occupancy —", 1: "occupancy 62%", 2: "occupancy —"} {
		m.showKernel(m.data.kernelIndex[tr.GPU[k].Name])
		if v := m.View(); !strings.Contains(v, want) || strings.Contains(v, "occupancy 0%") {
			t.Errorf("kernel %d detail lacks %q:\n%s", k, want, v)
		}
	}
}

// colourRenderer renders 256 colours on a dark or light background.
func colourRenderer(dark bool) *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI256)
	r.SetHasDarkBackground(dark)
	return r
}

// TestColourCarriesMeaning: high severity is red, a significant slowdown
// red and a speed-up green, the light background gets the darker variant,
// and an Ascii renderer (NO_COLOR) draws no escape at all.
func TestColourCarriesMeaning(t *testing.T) {
	for _, c := range []struct {
		dark            bool
		red, green, low string
	}{{true, "\x1b[1;91m", "\x1b[1;92m", "\x1b[38;5;245m"}, {false, "\x1b[1;31m", "\x1b[1;32m", "\x1b[38;5;244m"}} {
		st := newStyles(colourRenderer(c.dark))
		if got := st.severity(analyze.High).Render("high"); got != c.red+"high\x1b[0m" {
			t.Errorf("dark=%v: high severity renders %q", c.dark, got)
		}
		if got := st.severity(analyze.Low).Render("low"); got != c.low+"low\x1b[0m" {
			t.Errorf("dark=%v: low severity renders %q", c.dark, got)
		}
		if got := st.change(markWorse).Render(markWorse); got != c.red+markWorse+"\x1b[0m" {
			t.Errorf("dark=%v: ▲ renders %q", c.dark, got)
		}
		if got := st.change(markBetter).Render(markBetter); got != c.green+markBetter+"\x1b[0m" {
			t.Errorf("dark=%v: ▼ renders %q", c.dark, got)
		}
	}
	// On real screens: the findings table colours severities, the diff
	// its marks.
	opts := diffOptions()
	opts.Renderer = colourRenderer(true)
	m := loaded(t, opts, 120, 40)
	v := m.View()
	if !strings.Contains(v, "\x1b[1;92m ▼") || !strings.Contains(v, "\x1b[1;91m▲") {
		t.Errorf("diff screen has no coloured ▲/▼:\n%q", v)
	}
	press(m, "4", "down")
	if v := m.View(); !strings.Contains(v, "\x1b[1;91mhigh") {
		t.Errorf("findings screen does not colour high severity:\n%q", v)
	}
	press(m, "5")
	// The GPU lane is a bar chart (it has the rows), each bar in its
	// kernel's category colour.
	bar := func(sgr string) *regexp.Regexp {
		return regexp.MustCompile(regexp.QuoteMeta(sgr) + "[▁▂▃▄▅▆▇█]")
	}
	if v := m.View(); !bar("\x1b[94m").MatchString(v) || !bar("\x1b[96m").MatchString(v) || !strings.Contains(v, "\x1b[2;91m"+idleMark) || !strings.Contains(v, "\x1b[94m█ gemm") {
		t.Errorf("timeline GPU lane is not coloured by category (gemm blue, elementwise cyan) with idle marks and a legend:\n%q", v)
	}
	plain := loaded(t, diffOptions(), 120, 40)
	for s := range numScreens {
		press(plain, itoa(s+1))
		if strings.Contains(plain.View(), "\x1b") {
			t.Errorf("screen %d has escapes with NO_COLOR", s+1)
		}
	}
}

// TestDiffEnterOpensNew: Enter on a diff row opens NEW's kernel, and on a
// category row the kernel table filtered on that category.
func TestDiffEnterOpensNew(t *testing.T) {
	m := loaded(t, diffOptions(), 120, 40)
	ds := m.screens[scrDiff].(*diffScreen)
	row, _ := ds.kernels.selected()
	name := ds.r.Kernels[row].Name
	press(m, "enter")
	ks := m.screens[scrKernels].(*kernelsScreen)
	if m.cur != scrKernels || ks.detail == nil {
		t.Fatalf("Enter on a diff kernel: screen %d, detail %v", m.cur+1, ks.detail != nil)
	}
	if k, _ := ks.tbl.selected(); ks.d.kernels[k].Name != name {
		t.Errorf("opened %s, want %s", ks.d.kernels[k].Name, name)
	}
	press(m, "esc", "6", "c", "enter")
	row, _ = ds.cats.selected()
	cat := ds.r.Categories[row].Name
	if m.cur != scrKernels || m.filters[scrKernels] != cat || len(ks.tbl.view) == 0 {
		t.Fatalf("Enter on category %s: screen %d, filter %q, %d rows", cat, m.cur+1, m.filters[scrKernels], len(ks.tbl.view))
	}
	for _, r := range ks.tbl.view {
		if k := ks.d.kernels[r]; k.Category != cat && !strings.Contains(strings.ToLower(k.full), cat) {
			t.Errorf("category %s shows kernel %s of %s", cat, k.short, k.Category)
		}
	}
}

package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/fixtures"
	"github.com/tracelens/tracelens/ingest"
)

var update = flag.Bool("update", false, "rewrite the golden Markdown files in testdata/golden")

// synthetic are the hand-made traces in testdata (see gen_fixtures.py).
var synthetic = []string{"hostile_names.json", "no_steps.json", "no_python.json", "cpu_only.json"}

// load reads a trace by name: an embedded fixture, or a file in testdata.
func load(t testing.TB, name string) Input {
	t.Helper()
	var err error
	var in Input
	if strings.HasSuffix(name, ".gz") {
		r, oerr := fixtures.Open(name)
		if oerr != nil {
			t.Fatal(oerr)
		}
		in.Trace, err = ingest.Read(r, name, ingest.Options{})
	} else {
		in.Trace, err = ingest.ReadFile(filepath.Join("testdata", name), ingest.Options{})
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	in.Result, err = analyze.Run(in.Trace, analyze.Config{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return in
}

func allTraces() []string { return append(fixtures.Names(), synthetic...) }

func markdown(t *testing.T, in ...Input) string {
	t.Helper()
	var b bytes.Buffer
	if err := Markdown(&b, in, Options{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// withoutAnalyzerDocs replaces the rows of the appendix's analyzer table
// (one per analyzer that ran, with its Doc) by a marker, so adding an
// analyzer or rewording a Doc does not rewrite every golden file;
// TestAnalyzerAppendix checks that table instead.
func withoutAnalyzerDocs(md string) string {
	i := strings.Index(md, "### Analyzers\n")
	if i < 0 {
		return md
	}
	rest := md[i:]
	end := len(rest)
	if j := strings.Index(rest[1:], "\n#"); j >= 0 {
		end = j + 1
	}
	return md[:i] + "### Analyzers\n\n(one row per analyzer that ran: see TestAnalyzerAppendix)\n" + rest[end:]
}

// TestAnalyzerAppendix checks what golden files leave out: the appendix
// lists every analyzer that ran, its number of findings and the first
// sentence of its Doc.
func TestAnalyzerAppendix(t *testing.T) {
	for _, name := range []string{"eggroll_hooks.json.gz", "cpu_only.json"} {
		in := load(t, name)
		md := markdown(t, in)
		i := strings.Index(md, "### Analyzers\n")
		if i < 0 {
			t.Fatalf("%s: no analyzer appendix", name)
		}
		sec := md[i:]
		for _, a := range in.Result.Analyzers {
			n := 0
			for _, f := range in.Result.Findings {
				if f.ID == a {
					n++
				}
			}
			row := fmt.Sprintf("| `%s` | %d | ", a, n)
			if !strings.Contains(sec, row) {
				t.Errorf("%s: appendix lacks the row %q", name, row)
			}
		}
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	got = withoutAnalyzerDocs(got)
	path := filepath.Join("testdata", "golden", name+".md")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update and review the file)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s; run go test ./report -run TestGolden -update and review the diff\n%s", name, path, firstDiff(string(want), got))
	}
}

func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\nwant: " + w + "\n got: " + g
		}
	}
	return ""
}

// TestGolden pins the Markdown report of every fixture trace. Each golden
// file was read and judged by a person; -update rewrites them for review.
func TestGolden(t *testing.T) {
	for _, name := range allTraces() {
		t.Run(name, func(t *testing.T) {
			md := markdown(t, load(t, name))
			if n := checkTables(t, name, md); n < 3 {
				t.Errorf("only %d tables", n)
			}
			golden(t, strings.TrimSuffix(strings.TrimSuffix(name, ".gz"), ".json"), md)
		})
	}
}

// TestComparison covers several traces in one report: the comparison
// table first, then each trace's report one heading level down.
func TestComparison(t *testing.T) {
	naive, cublas := load(t, "fusedlinear_naive.json.gz"), load(t, "fusedlinear_cublas.json.gz")
	md := markdown(t, naive, cublas)
	checkTables(t, "comparison", md)
	for _, want := range []string{"# Performance report: 2 traces", "## Comparison", "## Performance report: `fusedlinear_naive`", "## Performance report: `fusedlinear_cublas`", "### Executive summary", "| 1.00× |"} {
		if !strings.Contains(md, want) {
			t.Errorf("comparison report lacks %q", want)
		}
	}
	golden(t, "comparison_fusedlinear", md)
}

func TestSections(t *testing.T) {
	md := markdown(t, load(t, "eggroll_hooks.json.gz"))
	order := []string{"# Performance report", "## Executive summary", "## Step breakdown", "```mermaid\nxychart-beta", "## Where the time goes",
		"```mermaid\npie", "### Time by annotation and module", "## Top kernels", "<details><summary>Full kernel names</summary>", "## Findings",
		"## Roofline", "## Recommended next steps", "## Appendix", "### Skipped events", "### Analyzers"}
	at := 0
	for _, s := range order {
		i := strings.Index(md[at:], s)
		if i < 0 {
			t.Fatalf("missing or out of order: %q", s)
		}
		at += i
	}
	summary := md[strings.Index(md, "## Executive summary"):strings.Index(md, "## Step breakdown")]
	if n := strings.Count(summary, "\n- "); n < 3 || n > 6 {
		t.Errorf("executive summary has %d bullets, want 3-6", n)
	}
}

func TestHostileNames(t *testing.T) {
	in := load(t, "hostile_names.json")
	md := markdown(t, in)
	checkTables(t, "hostile", md)
	if strings.ContainsAny(md, "\x1b\r\u202e") {
		t.Error("control characters reached the Markdown")
	}
	// The kernel's name is shown, readable and inert.
	if !strings.Contains(md, "``<script>alert(1)</script>\\|x`y␛[31m``") {
		t.Error("hostile kernel name not shown as an escaped code span")
	}
	// Even a renderer that passes raw HTML through produces no markup
	// from the names.
	out := renderUnsafe(t, md)
	doc, err := html.Parse(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	walk(doc, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		switch n.Data {
		case "script", "img", "iframe", "b", "a":
			t.Errorf("unsafe render of the Markdown produced <%s>", n.Data)
		}
	})
	var h bytes.Buffer
	if err := HTML(&h, []Input{in}, Options{}); err != nil {
		t.Fatal(err)
	}
	checkHTML(t, "hostile", h.String(), 5)
	if !strings.Contains(h.String(), "&lt;script&gt;alert(1)&lt;/script&gt;|x`y␛[31m") {
		t.Error("HTML does not show the hostile kernel name escaped")
	}
}

func TestMissingData(t *testing.T) {
	for _, tc := range []struct {
		trace string
		want  []string
		not   []string
	}{
		// No ProfilerStep, but the record_function range "block" repeats:
		// its calls are the steps (analyze.StepSourceRange).
		{"no_steps.json", []string{"3 steps", "| #0 |", "median excl. first"}, []string{"**No step markers**", "| whole trace |"}},
		{"no_python.json", []string{"The trace has no Python stacks", "## Top kernels"}, nil},
		{"cpu_only.json", []string{"**No GPU activity recorded**", "No GPU kernels in this trace.", "No GPU kernels: nothing to place on the roofline.", "Re-record with"}, []string{"NaN", "Inf", "GPU idle"}},
	} {
		t.Run(tc.trace, func(t *testing.T) {
			in := load(t, tc.trace)
			md := markdown(t, in)
			checkTables(t, tc.trace, md)
			for _, w := range tc.want {
				if !strings.Contains(md, w) {
					t.Errorf("missing %q", w)
				}
			}
			body, _, _ := strings.Cut(md, "## Appendix") // analyzer docs may mention anything
			for _, w := range tc.not {
				if strings.Contains(body, w) {
					t.Errorf("unexpected %q", w)
				}
			}
			var h bytes.Buffer
			if err := HTML(&h, []Input{in}, Options{}); err != nil {
				t.Fatal(err)
			}
			checkHTML(t, tc.trace, h.String(), 4)
		})
	}
}

// TestHTML checks the structure of the HTML report of every trace.
func TestHTML(t *testing.T) {
	for _, name := range fixtures.Names() {
		t.Run(name, func(t *testing.T) {
			var h bytes.Buffer
			if err := HTML(&h, []Input{load(t, name)}, Options{}); err != nil {
				t.Fatal(err)
			}
			st := checkHTML(t, name, h.String(), 6)
			if st.svgs < 3 {
				t.Errorf("%d inline SVG charts, want at least 3 (categories, timeline, kernel shares)", st.svgs)
			}
			if strings.Contains(h.String(), "```") || strings.Contains(h.String(), chartLang) {
				t.Error("a chart placeholder was not replaced")
			}
		})
	}
}

type htmlStats struct{ tables, svgs int }

// checkHTML parses page and asserts it is one self-contained document: no
// script, no event handlers, no external references, no raw HTML leaked
// through, and tables whose every row has the header's cell count.
func checkHTML(t *testing.T, name, page string, minTables int) htmlStats {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var st htmlStats
	styles := 0
	walk(doc, func(n *html.Node) {
		switch n.Type {
		case html.CommentNode:
			t.Errorf("%s: comment in the page (raw HTML dropped?): %q", name, n.Data)
		case html.ElementNode:
		default:
			return
		}
		switch n.Data {
		case "script", "iframe", "object", "embed", "img", "link", "base", "form", "foreignObject", "use", "image":
			t.Errorf("%s: <%s> element", name, n.Data)
		case "style":
			styles++
		case "svg":
			st.svgs++
		case "table":
			st.tables++
			checkHTMLTable(t, name, n)
		}
		for _, a := range n.Attr {
			v := strings.ToLower(a.Val)
			if strings.HasPrefix(strings.ToLower(a.Key), "on") {
				t.Errorf("%s: event handler %s on <%s>", name, a.Key, n.Data)
			}
			if strings.Contains(v, "://") || strings.Contains(v, "url(") || strings.HasPrefix(v, "javascript:") || strings.HasPrefix(v, "data:") {
				t.Errorf("%s: external reference %s=%q on <%s>", name, a.Key, a.Val, n.Data)
			}
		}
	})
	if styles != 1 {
		t.Errorf("%s: %d <style> elements, want the one inline stylesheet", name, styles)
	}
	if strings.Contains(pageCSS, "url(") || strings.Contains(pageCSS, "@import") {
		t.Errorf("stylesheet references an external resource")
	}
	if st.tables < minTables {
		t.Errorf("%s: %d tables, want at least %d", name, st.tables, minTables)
	}
	return st
}

func checkHTMLTable(t *testing.T, name string, table *html.Node) {
	want := -1
	walk(table, func(n *html.Node) {
		if n.Type != html.ElementNode || n.Data != "tr" {
			return
		}
		got := 0
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && (c.Data == "td" || c.Data == "th") {
				got++
			}
		}
		if want < 0 {
			want = got
		} else if got != want {
			t.Errorf("%s: HTML table row has %d cells, header %d", name, got, want)
		}
	})
}

func walk(n *html.Node, f func(*html.Node)) {
	f(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

// TestJSON checks that --format json is analyze's Result, unchanged.
func TestJSON(t *testing.T) {
	in := load(t, "fusedlinear_cublas.json.gz")
	var b bytes.Buffer
	if err := JSON(&b, []Input{in}); err != nil {
		t.Fatal(err)
	}
	// The report writes names as they are (gemm<float>), not HTML-escaped.
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(in.Result); err != nil {
		t.Fatal(err)
	}
	if b.String() != want.String() {
		t.Error("JSON report is not analyze's Result")
	}
	var top struct {
		Summary map[string]any   `json:"summary"`
		Kernels []map[string]any `json:"kernels"`
	}
	if err := json.Unmarshal(b.Bytes(), &top); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"events", "kernel_launches", "distinct_kernels", "gpu_kernel_us", "device"} {
		if _, ok := top.Summary[k]; !ok {
			t.Errorf("summary lacks top's field %q", k)
		}
	}
	b.Reset()
	if err := JSON(&b, []Input{in, in}); err != nil {
		t.Fatal(err)
	}
	var many []analyze.Result
	if err := json.Unmarshal(b.Bytes(), &many); err != nil || len(many) != 2 {
		t.Errorf("two traces: want an array of 2 Results, got %d (%v)", len(many), err)
	}
}

func TestBadInput(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, nil, Options{}); err == nil {
		t.Error("no traces: want an error")
	}
	if err := HTML(&b, []Input{{}}, Options{}); err == nil {
		t.Error("nil trace: want an error")
	}
}

// TestRooflineLabelsTerminate: labels of points at one intensity stack
// below each other. A stack whose spacing rounds below the label height in
// floating point once made the placement loop spin forever (the recorded
// transformer_sdpa trace's 14 GEMM rows hung report --format html).
func TestRooflineLabelsTerminate(t *testing.T) {
	// The rows' achieved TFLOP/s and FLOP/byte, as analyze computed them.
	pts := [][2]float64{{110.13238684384477, 170.66666666666666}, {112.43369884816754, 170.66666666666666},
		{127.31781001818136, 170.66666666666666}, {108.93927667489602, 170.66666666666666}, {110.49000041160734, 170.66666666666666},
		{89.87459930806145, 161.68421052631578}, {92.40463201376937, 161.68421052631578}, {95.44183241812506, 161.68421052631578},
		{132.62075309811024, 170.66666666666666}, {33.28812698412699, 113.77777777777777}, {151.1389983578098, 170.66666666666666},
		{38.24774960816908, 113.77777777777777}, {40.986684039087955, 113.77777777777777}, {45.26736188870152, 113.77777777777777}}
	var rows []analyze.RooflineRow
	for _, p := range pts {
		rows = append(rows, analyze.RooflineRow{Op: "aten::mm", TFLOPS: p[0], Intensity: p[1], PeakTFLOPS: 989, PeakGBps: 3350})
	}
	done := make(chan string)
	go func() { done <- rooflineSVG(rows) }()
	select {
	case svg := <-done:
		if n := strings.Count(svg, `class="label"`); n != len(rows) {
			t.Errorf("%d labels for %d points", n, len(rows))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("label placement does not terminate")
	}
}

package report

import (
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/distributed"
	"github.com/tracelens/tracelens/jsonout"
	"github.com/tracelens/tracelens/trace"
)

// Input is one trace and what analyze computed about it.
type Input struct {
	Trace  *trace.Trace
	Result *analyze.Result
	// Run, for one rank of a multi-rank run, is the run's analysis and
	// Rank the rank Trace is (see ranks.go).
	Run  *distributed.Result
	Rank int
	// RunName names the run (its directory); the report is titled by it.
	RunName string
}

// Options tune what the report shows.
type Options struct {
	// TopKernels is the number of rows of the top-kernels table; 0 means
	// DefaultTopKernels.
	TopKernels int
}

// DefaultTopKernels is how many kernels the report lists unless told.
const DefaultTopKernels = 10

// Markdown writes the report for in (one trace, or several with a
// comparison table first) as GitHub-flavoured Markdown.
func Markdown(w io.Writer, in []Input, opt Options) error {
	d, err := build(in, opt, false)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, d.b.String())
	return err
}

// HTML writes the same report as one self-contained HTML page: the
// Markdown rendered by goldmark, inline CSS and SVG charts in place of the
// mermaid blocks, plus a timeline, kernel-share and roofline chart.
func HTML(w io.Writer, in []Input, opt Options) error {
	d, err := build(in, opt, true)
	if err != nil {
		return err
	}
	return writeHTML(w, d.title, d.b.String(), d.charts)
}

// JSON writes analyze's Result, the machine contract of the report: the
// Result object for one trace, an array of them for several.
func JSON(w io.Writer, in []Input) error {
	if err := check(in); err != nil {
		return err
	}
	if len(in) == 1 && in[0].Run != nil {
		return writeRunJSON(w, in[0])
	}
	if len(in) == 1 {
		return jsonout.Write(w, in[0].Result)
	}
	rs := make([]*analyze.Result, len(in))
	for i := range in {
		rs[i] = in[i].Result
	}
	return jsonout.Write(w, rs)
}

func check(in []Input) error {
	if len(in) == 0 {
		return errors.New("report: no traces")
	}
	for i, x := range in {
		if x.Trace == nil || x.Result == nil {
			return fmt.Errorf("report: input %d has no trace or no analysis", i)
		}
	}
	return nil
}

// doc accumulates the Markdown of a report. In HTML mode chart blocks
// become placeholders resolved to SVG by writeHTML; otherwise they are
// mermaid blocks (or nothing, for charts only the HTML report draws).
type doc struct {
	b      strings.Builder
	html   bool
	charts map[string]string
	// depth is added to every heading level: 1 when several traces share
	// one document under a comparison.
	depth int
	title string
	opt   Options
	// result is the trace being written (single sets it).
	result *analyze.Result
	err    error
}

func build(in []Input, opt Options, html bool) (*doc, error) {
	if err := check(in); err != nil {
		return nil, err
	}
	if opt.TopKernels <= 0 {
		opt.TopKernels = DefaultTopKernels
	}
	d := &doc{html: html, charts: map[string]string{}, opt: opt}
	if len(in) == 1 {
		d.title = "Performance report: " + workload(in[0].Result.Source)
		if in[0].Run != nil {
			d.title = "Performance report: run " + runTitle(in[0])
		}
		d.single(in[0])
	} else {
		d.title = fmt.Sprintf("Performance report: %d traces", len(in))
		d.heading(1, Text(d.title))
		d.comparison(in)
		d.depth = 1
		for _, x := range in {
			d.single(x)
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	return d, nil
}

func (d *doc) heading(level int, text string) {
	fmt.Fprintf(&d.b, "%s %s\n\n", strings.Repeat("#", min(level+d.depth, 6)), text)
}

func (d *doc) para(format string, a ...any) {
	fmt.Fprintf(&d.b, format, a...)
	d.b.WriteString("\n\n")
}

func (d *doc) table(t *table) {
	if err := t.write(&d.b); err != nil && d.err == nil {
		d.err = err
	}
}

// chart places a chart: mermaid source in Markdown, the SVG from svg in
// HTML. Either may be empty when that form does not exist.
func (d *doc) chart(mermaid string, svg func() string) {
	if !d.html {
		if mermaid != "" {
			fmt.Fprintf(&d.b, "```mermaid\n%s```\n\n", mermaid)
		}
		return
	}
	s := svg()
	if s == "" {
		return
	}
	id := fmt.Sprintf("chart-%d", len(d.charts)+1)
	d.charts[id] = s
	fmt.Fprintf(&d.b, "```%s\n%s\n```\n\n", chartLang, id)
}

// single writes the whole report of one trace.
func (d *doc) single(x Input) {
	t, r := x.Trace, x.Result
	d.result = r
	if x.Run != nil {
		d.heading(1, "Performance report: run "+Code(runTitle(x)))
	} else {
		d.heading(1, "Performance report: "+Code(workload(r.Source)))
	}
	d.header(t, r)
	d.heading(2, "Executive summary")
	d.summary(t, r)
	d.ranks(x)
	d.stepLedger(r)
	d.steps(t, r)
	d.timeBreakdown(r)
	d.kernels(r)
	d.findings(r)
	d.roofline(r)
	d.memory(r)
	d.nextSteps(r)
	d.appendix(t, r)
}

// workload names a trace after its file, without directories and the
// profiler's extensions.
func workload(source string) string {
	base := path.Base(strings.ReplaceAll(source, "\\", "/"))
	base = strings.TrimPrefix(base, "embedded:")
	for _, ext := range []string{".gz", ".json", ".perfetto", ".pt.trace", ".trace"} {
		base = strings.TrimSuffix(base, ext)
	}
	if base == "" || base == "." || base == "/" {
		return source
	}
	return base
}

package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tracelens/tracelens/distributed"
	"github.com/tracelens/tracelens/report"
)

const reportArgs = "[-o FILE] [--format md|html|json] [-n N] [--enable a,b] [--disable c] TRACE..."

func reportCommand() command {
	return command{name: "report", args: reportArgs, summary: "write the investigation report (Markdown, self-contained HTML or JSON); several traces add a comparison", run: runReport,
		examples: []string{
			"tracelens report -o report.html trace.json",
			"tracelens report --format md before.json after.json > compare.md",
			"tracelens report -o run.json runs/ddp/",
		}}
}

// reportFormats maps output file extensions to report formats.
var reportFormats = map[string]string{".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".json": "json"}

func runReport(e *env, args []string) error {
	fs := newFlags("report")
	out := fs.String("o", "", "write the report to `FILE` instead of stdout (its extension .md, .html or .json picks the format)")
	format := fs.String("format", "", "output `FORMAT`: md, html or json (default: from -o's extension, else md)")
	n := fs.Int("n", report.DefaultTopKernels, "list the top `N` kernels")
	paths, err := parseFlags(e, fs, reportArgs, args)
	if err != nil {
		return err
	}
	rf := &e.run
	if len(paths) == 0 {
		return usageError{"missing TRACE argument"}
	}
	if err := stdinOnce(paths); err != nil {
		return err
	}
	if *n < 1 {
		return usageError{"-n must be at least 1"}
	}
	f, err := reportFormat(*format, *out)
	if err != nil {
		return err
	}
	if err := refuseOutputOverInput(*out, paths); err != nil {
		return err
	}
	cfg := e.cfg
	in := make([]report.Input, 0, len(paths))
	if distributed.IsRun(paths) {
		x, err := loadRunInput(e, paths, rf, cfg)
		if err != nil {
			return err
		}
		in, paths = append(in, x), nil
	}
	for _, p := range paths {
		t, err := loadTrace(e, p)
		if err != nil {
			return err
		}
		r, err := e.analyzeWithin(p, t, cfg)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		in = append(in, report.Input{Trace: t, Result: r})
	}
	if f == "json" && *out == "" {
		// Straight to stdout: jsonout checks that the whole value encodes
		// before its first byte is written (an encoding error writes
		// nothing), then streams it piece by piece; copying a 2,205-step
		// report's 30 MB into a buffer first was a third of its output
		// time on 16 cores, and holding a 2,755-step report's 17 MB
		// started a collection that tripled it.
		err = report.JSON(e.stdout, in)
		e.stageAt("output rendered")
		return err
	}
	var buf bytes.Buffer
	opt := report.Options{TopKernels: *n}
	switch f {
	case "md":
		err = report.Markdown(&buf, in, opt)
	case "html":
		err = report.HTML(&buf, in, opt)
	case "json":
		err = report.JSON(&buf, in)
	}
	if err != nil {
		return err
	}
	e.stageAt("output rendered")
	if *out == "" {
		_, err = e.stdout.Write(buf.Bytes())
		return err
	}
	return writeFileAtomic(*out, buf.Bytes())
}

// reportFormat resolves --format, falling back to -o's extension, then to
// Markdown.
func reportFormat(format, out string) (string, error) {
	switch format {
	case "md", "html", "json":
		return format, nil
	case "markdown":
		return "md", nil
	case "":
	default:
		return "", usageError{fmt.Sprintf("unknown --format %q (want md, html or json)", format)}
	}
	if out == "" {
		return "md", nil
	}
	ext := strings.ToLower(filepath.Ext(out))
	if f, ok := reportFormats[ext]; ok {
		return f, nil
	}
	return "", usageError{fmt.Sprintf("cannot tell the format from %q: name it .md, .html or .json, or pass --format", out)}
}

// writeFileAtomic writes the report to path through a temporary file
// renamed into place (writeOutput), so a failed run never leaves half a
// report behind.
func writeFileAtomic(path string, data []byte) error {
	if err := writeOutput(path, data); err != nil {
		return fmt.Errorf("writing report %s: %w", path, err)
	}
	return nil
}

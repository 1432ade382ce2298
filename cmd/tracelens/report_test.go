package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportCLI runs the built binary as a user would: formats, -o with
// the format taken from the extension, several traces, and the exit codes
// of bad calls.
func TestReportCLI(t *testing.T) {
	dir := t.TempDir()
	cublas, naive := fixture("fusedlinear_cublas.json.gz"), fixture("fusedlinear_naive.json.gz")
	run := func(args ...string) (string, string, int) {
		t.Helper()
		return runCLI(t, nil, args...)
	}

	t.Run("markdown to stdout", func(t *testing.T) {
		out, errOut, code := run("report", cublas)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if !strings.HasPrefix(out, "# Performance report: `fusedlinear_cublas`") || !strings.Contains(out, "## Executive summary") {
			t.Errorf("not a Markdown report:\n%.300s", out)
		}
	})

	t.Run("extension picks the format", func(t *testing.T) {
		for ext, want := range map[string]string{".md": "# Performance report", ".html": "<!DOCTYPE html>", ".json": "{\n  \"schema_version\": 2,\n  \"source\""} {
			path := filepath.Join(dir, "out"+ext)
			out, errOut, code := run("report", "-o", path, cublas)
			if code != 0 || out != "" {
				t.Fatalf("%s: exit %d, stdout %q, stderr %s", ext, code, out, errOut)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(b), want) {
				t.Errorf("%s: file starts %.40q, want %q", ext, b, want)
			}
		}
	})

	t.Run("format flag wins over the extension", func(t *testing.T) {
		path := filepath.Join(dir, "report.txt")
		if _, errOut, code := run("report", "--format", "json", "-o", path, cublas); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var r map[string]any
		b, _ := os.ReadFile(path)
		if err := json.Unmarshal(b, &r); err != nil {
			t.Errorf("--format json -o report.txt: %v", err)
		}
	})

	t.Run("several traces compare", func(t *testing.T) {
		out, errOut, code := run("report", naive, cublas)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if !strings.Contains(out, "## Comparison") || strings.Count(out, "## Performance report: ") != 2 {
			t.Errorf("no comparison of two traces:\n%.500s", out)
		}
		out, _, _ = run("report", "--format", "json", naive, cublas)
		var rs []map[string]any
		if err := json.Unmarshal([]byte(out), &rs); err != nil || len(rs) != 2 {
			t.Errorf("json of two traces: %v, %d results", err, len(rs))
		}
	})

	t.Run("flags after the traces", func(t *testing.T) {
		out, errOut, code := run("report", cublas, "--format", "html")
		if code != 0 || !strings.HasPrefix(out, "<!DOCTYPE html>") {
			t.Errorf("exit %d, %.40q, %s", code, out, errOut)
		}
	})

	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no trace", []string{"report"}, 2, "missing TRACE"},
		{"unknown format", []string{"report", "--format", "pdf", cublas}, 2, "unknown --format"},
		{"unknown extension", []string{"report", "-o", filepath.Join(dir, "x.pdf"), cublas}, 2, "cannot tell the format"},
		{"unknown analyzer", []string{"report", "--enable", "nope", cublas}, 2, "unknown analyzer"},
		{"missing file", []string{"report", filepath.Join(dir, "missing.json")}, 2, "missing.json"},
		{"bad -n", []string{"report", "-n", "0", cublas}, 2, "-n must be"},
		{"unwritable output", []string{"report", "-o", filepath.Join(dir, "no", "such", "dir.md"), cublas}, 2, "writing report"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.msg) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errOut, tc.code, tc.msg)
			}
			if out != "" {
				t.Errorf("stdout not empty on error: %.100q", out)
			}
		})
	}

	t.Run("help", func(t *testing.T) {
		out, _, code := run("report", "-h")
		if code != 0 || !strings.Contains(out, "usage: tracelens report") {
			t.Errorf("exit %d: %s", code, out)
		}
	})
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/parquet-go/parquet-go"

	"github.com/tracelens/tracelens/export"
	"github.com/tracelens/tracelens/tui"
)

// The flags every trace-reading command shares are declared once
// (declareTraceFlags) and reach the analysis in every face: with
// --disable custom-gemm the hand-written GEMM finding, present without
// it, is gone from findings (and tf32-disabled from demo's sample), report (md, html, json), diff, annotate's
// timeline, the exported findings table, the MCP server's findings tool
// and the TUI's first screen.
func TestDisableReachesEveryFace(t *testing.T) {
	naive, cublas := fixture("fusedlinear_naive.json.gz"), fixture("fusedlinear_cublas.json.gz")
	text := func(args ...string) func(t *testing.T, flags []string) string {
		return func(t *testing.T, flags []string) string {
			cmd := append([]string{args[0]}, append(slices.Clone(flags), args[1:]...)...)
			out, stderr, code := runCLI(t, nil, cmd...)
			if code != exitOK {
				t.Fatalf("%v: exit %d: %s", cmd, code, stderr)
			}
			return out
		}
	}
	faces := []struct {
		name string
		out  func(t *testing.T, flags []string) string
		has  string // how the face shows the finding
	}{
		{"findings", text("findings", naive), "[custom-gemm]"},
		{"findings json", text("findings", "--format", "json", naive), `"custom-gemm"`},
		{"report md", text("report", naive), "custom-gemm"},
		{"report html", text("report", "--format", "html", naive), "custom-gemm"},
		{"report json", text("report", "--format", "json", naive), `"custom-gemm"`},
		{"diff", text("diff", "--format", "md", naive, cublas), "custom-gemm"},
		{"demo", text("demo"), "[tf32-disabled]"}, // the embedded sample
		{"annotate", annotated(naive), "custom-gemm"},
		{"export", exportedFindings(naive), "custom-gemm"},
		{"mcp", mcpFindings(naive), "custom-gemm"},
		{"tui", tuiFaceScreen(naive), "hand-written GEMM"},
	}
	for _, f := range faces {
		t.Run(f.name, func(t *testing.T) {
			if out := f.out(t, nil); !strings.Contains(out, f.has) {
				t.Fatalf("without --disable, no %q in:\n%.2000s", f.has, out)
			}
			if out := f.out(t, []string{"--disable", "custom-gemm,tf32-disabled"}); strings.Contains(out, f.has) {
				t.Errorf("--disable custom-gemm,tf32-disabled left %q in:\n%.2000s", f.has, out)
			}
		})
	}
}

// The memory budget and the step range reach every command that reads a
// trace: a 1 KB budget stops each with exit 2 naming --max-memory, and an
// unknown --step-range stops each naming the file and the range.
func TestMaxMemoryAndStepRangeReachEveryCommand(t *testing.T) {
	naive := fixture("fusedlinear_naive.json.gz")
	for _, cmd := range [][]string{
		{"info", naive}, {"top", naive}, {"findings", naive}, {"report", naive},
		{"diff", naive, naive}, {"annotate", "-o", filepath.Join(t.TempDir(), "a.json"), naive},
		{"export", "-o", t.TempDir(), naive},
	} {
		args := append([]string{cmd[0], "--max-memory", "1KB"}, cmd[1:]...)
		_, stderr, code := runCLI(t, nil, args...)
		if code != exitUsageOrBad || !strings.Contains(stderr, "--max-memory") {
			t.Errorf("%v: exit %d, stderr %q: want 2 naming --max-memory", args, code, stderr)
		}
		args = append([]string{cmd[0], "--step-range", "no-such-range"}, cmd[1:]...)
		out, stderr, code := runCLI(t, nil, args...)
		if code == exitOK || !strings.Contains(out+stderr, `no range named "no-such-range"`) || !strings.Contains(out+stderr, "fusedlinear_naive") {
			t.Errorf("%v: exit %d, stdout %.300q, stderr %q: want a failure naming the file and the range", args, code, out, stderr)
		}
	}
}

// annotated is `tracelens annotate` with flags: the annotated trace.
func annotated(path string) func(t *testing.T, flags []string) string {
	return func(t *testing.T, flags []string) string {
		out := filepath.Join(t.TempDir(), "a.json")
		args := append(append([]string{"annotate"}, flags...), "-o", out, path)
		if _, stderr, code := runCLI(t, nil, args...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
}

// exportedFindings is `tracelens export` with flags: the findings
// table's analyzer ids, read back.
func exportedFindings(path string) func(t *testing.T, flags []string) string {
	return func(t *testing.T, flags []string) string {
		dir := t.TempDir()
		args := append(append([]string{"export"}, flags...), "-o", dir, path)
		if _, stderr, code := runCLI(t, nil, args...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		rows, err := parquet.ReadFile[export.FindingRow](filepath.Join(dir, export.TableFindings, "fusedlinear_naive.parquet"))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
		return strings.Join(ids, " ")
	}
}

// mcpFindings is `tracelens mcp` with flags: its findings tool's answer
// for path.
func mcpFindings(path string) func(t *testing.T, flags []string) string {
	return func(t *testing.T, flags []string) string {
		cs, wait := mcpSession(t, flags...)
		res := mcpCall(t, cs, "findings", map[string]any{"trace": path, "limit": 50})
		if code, stderr := wait(); code != exitOK {
			t.Fatalf("mcp %v: exit %d: %s", flags, code, stderr)
		}
		return resultText(res)
	}
}

// tuiFaceScreen is `tracelens tui` with flags: its first screen, rendered in
// process from the options runTUI builds.
func tuiFaceScreen(path string) func(t *testing.T, flags []string) string {
	return func(t *testing.T, flags []string) string {
		e := &env{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
		if _, err := parseFlags(e, newFlags("tui"), tuiArgs, flags); err != nil {
			t.Fatal(err)
		}
		r := lipgloss.NewRenderer(&bytes.Buffer{})
		r.SetColorProfile(termenv.Ascii)
		q := quietEnv(e)
		return tuiFirstScreen(t, tui.Options{Name: path, Load: tuiLoader(q, path), Analyze: e.analyze, Renderer: r})
	}
}

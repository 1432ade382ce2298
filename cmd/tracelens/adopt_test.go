package main

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// traceFixtures lists every single-trace fixture (run directories apart).
func traceFixtures(t *testing.T) []string {
	t.Helper()
	var out []string
	root := filepath.Join("..", "..", "fixtures")
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "runs" {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".json.gz") || strings.HasSuffix(p, ".sqlite.gz")) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil || len(out) == 0 {
		t.Fatalf("fixtures: %v (%d found)", err, len(out))
	}
	return out
}

// topRows runs `top -n 0` on path as text and as JSON and returns the
// printed name of each row with the row's kernel (name and autotune mark).
func topRows(t *testing.T, path string, extra ...string) (printed, kernels []string) {
	t.Helper()
	args := append([]string{"top", "-n", "0"}, extra...)
	js, stderr, code := runCLI(t, nil, append(args, "--format", "json", path)...)
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", path, code, stderr)
	}
	var got topJSON
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	text, stderr, code := runCLI(t, nil, append(args, path)...)
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", path, code, stderr)
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "KERNEL ") {
			continue
		}
		for k, row := range lines[i+1 : i+1+len(got.Kernels)] {
			kn := got.Kernels[k]
			// The numeric columns are the last 8 fields.
			f := strings.Fields(row)
			if len(f) < 9 {
				t.Fatalf("%s: row %q has no name", path, row)
			}
			name := strings.TrimSpace(strings.TrimSuffix(row, strings.Join(f[len(f)-8:], "")))
			idx := strings.Index(row, " "+f[len(f)-8]+" ")
			if idx >= 0 {
				name = strings.TrimSpace(row[:idx])
			}
			printed = append(printed, name)
			id := kn.Name
			if kn.Autotune {
				id = "[autotune] " + id
			}
			kernels = append(kernels, id)
		}
		break
	}
	if len(printed) != len(got.Kernels) {
		t.Fatalf("%s: %d printed rows for %d kernels:\n%s", path, len(printed), len(got.Kernels), text)
	}
	return printed, kernels
}

// TestTopNamesDistinct checks, on every fixture, that `top` never prints
// two different kernels with the same name (issue 29: the cut made
// sm80_xmma_gemm_f32f…cublas twice), and that --wide prints full names.
func TestTopNamesDistinct(t *testing.T) {
	for _, p := range traceFixtures(t) {
		printed, kernels := topRows(t, p)
		seen := map[string]string{}
		for i, s := range printed {
			if k, ok := seen[s]; ok && k != kernels[i] {
				t.Errorf("%s: two kernels print as %q:\n  %s\n  %s", p, s, k, kernels[i])
			}
			seen[s] = kernels[i]
			if n := utf8.RuneCountInString(s); n > topNameWidth {
				t.Errorf("%s: %q is %d columns, wider than %d", p, s, n, topNameWidth)
			}
		}
	}
	for _, flag := range []string{"--wide", "-w"} {
		printed, kernels := topRows(t, fixture("eggroll_direct.json.gz"), flag)
		for i := range printed {
			if printed[i] != kernels[i] {
				t.Errorf("top %s: row %d prints %q, want the full name %q", flag, i, printed[i], kernels[i])
			}
		}
	}
}

// diffKernelNames returns the first cells of the text diff's kernel table.
func diffKernelNames(t *testing.T, args ...string) []string {
	t.Helper()
	out, stderr, code := runCLI(t, nil, append([]string{"diff"}, args...)...)
	if code != 0 {
		t.Fatalf("diff %v: exit %d: %s", args, code, stderr)
	}
	var names []string
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "Kernels (GPU time per step)") {
			continue
		}
		for _, row := range lines[i+2:] {
			if row == "" || strings.HasPrefix(row, "…") {
				break
			}
			names = append(names, strings.TrimSpace(strings.SplitN(row, "  ", 2)[0]))
		}
	}
	if len(names) == 0 {
		t.Fatalf("no kernel table in:\n%s", out)
	}
	return names
}

// TestDiffNamesDistinct: the text diff printed two cuBLAS GEMMs as
// sm80_xmma_gemm_f32f…cublas (issue 29); --wide prints whole names.
func TestDiffNamesDistinct(t *testing.T) {
	a, b := fixture("eggroll_direct.json.gz"), fixture("eggroll_hooks.json.gz")
	names := diffKernelNames(t, a, b)
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			t.Errorf("two kernel rows print as %q", n)
		}
		seen[n] = true
	}
	wide := diffKernelNames(t, "--wide", a, b)
	if !slices.Contains(wide, "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas") {
		t.Errorf("diff --wide does not print the whole GEMM name: %q", wide)
	}
}

// TestJSONNotHTMLEscaped: JSON for users reads gemm<float> as written, not
// gemm\u003cfloat\u003e (issue 29), in every command that writes JSON.
func TestJSONNotHTMLEscaped(t *testing.T) {
	a, b := fixture("eggroll_direct.json.gz"), fixture("eggroll_hooks.json.gz")
	run := filepath.Join("..", "..", "fixtures", "runs", "multirank_ddp")
	for _, args := range [][]string{
		{"top", "-n", "0", a}, {"findings", a}, {"report", a}, {"diff", a, b},
		{"top", run}, {"findings", run}, {"report", run},
	} {
		out, stderr, code := runCLI(t, nil, append([]string{args[0], "--format", "json"}, args[1:]...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		if !json.Valid([]byte(out)) {
			t.Errorf("%v: invalid JSON", args)
		}
		for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
			if strings.Contains(out, esc) {
				t.Errorf("%v: JSON escapes HTML (%s)", args, esc)
			}
		}
		if args[0] != "findings" && !strings.Contains(out, "<") {
			t.Errorf("%v: no kernel name with template arguments", args)
		}
	}
}

// layoutProbe, added to a report page, lists in body's data-layout what
// lies outside a 1400 px window: tables that scroll sideways and cells
// past the right edge.
const layoutProbe = `<script>
window.addEventListener('load', () => {
  const W = document.documentElement.clientWidth, bad = [];
  document.querySelectorAll('table').forEach((t, i) => {
    if (t.scrollWidth > t.clientWidth + 1) bad.push('table ' + i + ' scrolls ' + (t.scrollWidth - t.clientWidth) + 'px');
    t.querySelectorAll('td, th').forEach(c => {
      if (c.getBoundingClientRect().right > W + 1) bad.push('cell past the window: ' + c.innerText.slice(0, 40));
    });
  });
  document.body.setAttribute('data-layout', JSON.stringify(bad));
});
</script>`

// TestHTMLLongNamesKeepNumbersVisible: in the HTML report at 1400 px, one
// long Triton name (nanobragg_compile's 148-character pointwise kernel)
// pushed the op table's numeric columns off-screen (issue 29); long names
// now wrap inside a bounded column. Runs the report in headless Chromium.
func TestHTMLLongNamesKeepNumbersVisible(t *testing.T) {
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("no chromium on PATH (apt-get install chromium)")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if _, stderr, code := runCLI(t, nil, "report", "--format", "html", "-o", page, fixture("nanobragg_compile.json.gz")); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "triton_poi_fused__to_copy_abs_add_arange_bitwise_and_bitwise_not") {
		t.Fatal("the report lost the long Triton name this test is about")
	}
	probe := filepath.Join(dir, "probe.html")
	if err := os.WriteFile(probe, []byte(strings.Replace(string(b), "</body>", layoutProbe+"</body>", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--window-size=1400,900", "--dump-dom", "file://"+probe).Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	m := regexp.MustCompile(`data-layout="([^"]*)"`).FindSubmatch(out)
	if m == nil {
		t.Fatal("the layout probe did not run")
	}
	var bad []string
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &bad); err != nil {
		t.Fatal(err)
	}
	for _, s := range bad {
		t.Error(s)
	}
}

// tuiInTmux runs `sh -c script` (a tracelens tui command line, $TL the
// binary) in a 120×40 tmux terminal until its screen shows every string
// in want, quits with q and returns the screen and the exit status.
func tuiInTmux(t *testing.T, script string, want ...string) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed (apt-get install tmux); the terminal UI test needs it")
	}
	bin := cliBinary(t)
	dir := t.TempDir()
	status := filepath.Join(dir, "status")
	socket := "tracelens-adopt-" + filepath.Base(filepath.Dir(dir)) + filepath.Base(dir)
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-L", socket}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	cmd := "unset CI; TL='" + bin + "'; " + script + "; echo $? > '" + status + "'; sleep 60"
	tmux("new-session", "-d", "-x", "120", "-y", "40", "-s", "tui", "sh", "-c", cmd)
	t.Cleanup(func() { exec.Command("tmux", "-L", socket, "kill-server").Run() })
	screen := ""
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		screen = tmux("capture-pane", "-p", "-t", "tui")
		missing := slices.IndexFunc(want, func(w string) bool { return !strings.Contains(screen, w) })
		if missing < 0 {
			break
		}
		if b, err := os.ReadFile(status); err == nil || time.Now().After(deadline) {
			t.Fatalf("%s: screen never showed %q (exit %s):\n%s", script, want[missing], b, screen)
		}
	}
	tmux("send-keys", "-t", "tui", "q")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if b, err := os.ReadFile(status); err == nil && strings.HasSuffix(string(b), "\n") {
			return screen, strings.TrimSpace(string(b))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: did not quit:\n%s", script, tmux("capture-pane", "-p", "-t", "tui"))
		}
	}
}

// TestTUIInputForms: `tui -` reads the trace from standard input and the
// keys from the terminal (it failed with "invalid JSON at byte 5": the
// UI read keys from the pipe); `tui DIR DIR` compares two runs as `diff
// DIR DIR` does (issue 29).
func TestTUIInputForms(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end terminal test")
	}
	trace, err := filepath.Abs(fixture("eggroll_hooks.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	_, code := tuiInTmux(t, `"$TL" tui - < '`+trace+`'`, "[1 Overview]", "NVIDIA H100")
	if code != "0" {
		t.Errorf("tui -: exit %s", code)
	}
	a, _ := filepath.Abs(fixture("runs/ddp_host_straggler"))
	b, _ := filepath.Abs(fixture("runs/ddp_compute_straggler"))
	// The figures themselves are TestDiffNumbersOneFormat's: the same as
	// diff DIR DIR prints.
	_, code = tuiInTmux(t, `"$TL" tui '`+a+`' '`+b+`'`, "[6 Diff]", "step period", "PER STEP")
	if code != "0" {
		t.Errorf("tui DIR DIR: exit %s", code)
	}
}

// TestExportStdinAndEmbedded: export takes - and embedded:NAME like every
// other command (it failed with "stat -"), and says so by those names.
func TestExportStdinAndEmbedded(t *testing.T) {
	raw, err := os.ReadFile(fixture("eggroll_hooks.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out, stderr, code := runCLI(t, raw, "export", "-o", dir, "-")
	if code != 0 || !strings.Contains(out, "stdin: 175 kernels") || !strings.Contains(out, "(-)") {
		t.Errorf("export -: exit %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = runCLI(t, nil, "export", "-o", dir, "embedded:eggroll_direct.json.gz")
	if code != 0 || !strings.Contains(out, "eggroll_direct: 175 kernels") {
		t.Errorf("export embedded: exit %d\n%s%s", code, out, stderr)
	}
	for _, table := range []string{"runs/stdin.parquet", "kernels/eggroll_direct.parquet"} {
		if _, err := os.Stat(filepath.Join(dir, table)); err != nil {
			t.Error(err)
		}
	}
	out, _, _ = runCLI(t, raw, "export", "-o", dir, "-")
	if !strings.Contains(out, "stdin: up to date (-)") {
		t.Errorf("export - again is not up to date:\n%s", out)
	}
	_, stderr, code = runCLI(t, []byte(`{"traceEvents": [`), "export", "-o", t.TempDir(), "-")
	if code != 2 || !strings.Contains(stderr, "-: invalid JSON") || strings.Contains(stderr, os.TempDir()) {
		t.Errorf("export of broken stdin: exit %d, %q", code, stderr)
	}
}

// TestStdinOnlyOnce: `diff - -` said "empty file" about the second read of
// standard input; every command that takes two traces says it can be read
// only once.
func TestStdinOnlyOnce(t *testing.T) {
	raw, err := os.ReadFile(fixture("eggroll_hooks.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"diff", "-", "-"}, {"report", "-", "-"}, {"export", "-o", t.TempDir(), "-", "-"}} {
		_, stderr, code := runCLI(t, raw, args...)
		if code != 2 || !strings.Contains(stderr, "standard input (-) can be read only once") {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
}

// TestInfoStepsAsFindings: on traces without ProfilerStep#N marks, info
// said "the whole trace counts as one step" while findings derived 4–6
// steps from repeated calls (issue 29); info now counts the same steps.
func TestInfoStepsAsFindings(t *testing.T) {
	for _, name := range []string{"nanobragg_compile.json.gz", "recorded/eager_nbody_nomark.json.gz", "recorded/jax_two_fns.perfetto.json.gz", "eggroll_hooks.json.gz"} {
		js, stderr, code := runCLI(t, nil, "findings", "--format", "json", fixture(name))
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		var r struct {
			Summary struct {
				Steps int `json:"steps"`
			} `json:"summary"`
		}
		if err := json.Unmarshal([]byte(js), &r); err != nil {
			t.Fatal(err)
		}
		info, stderr, code := runCLI(t, nil, "info", fixture(name))
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		want := fmt.Sprintf("steps      %d", r.Summary.Steps)
		if !strings.Contains(info, want) {
			t.Errorf("%s: findings has %d steps, info says:\n%s", name, r.Summary.Steps, info)
		}
	}
}

// TestDiffNumbersOneFormat: `diff` printed "−31% (p=0.029" and the
// terminal UI "-30.7%  0.03" for the same step time (issue 29); both now
// format with diff's functions, so every figure of the CLI's step-time row
// appears on the UI's.
func TestDiffNumbersOneFormat(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end terminal test")
	}
	a, _ := filepath.Abs(fixture("eggroll_hooks.json.gz"))
	b, _ := filepath.Abs(fixture("eggroll_direct.json.gz"))
	out, stderr, code := runCLI(t, nil, "diff", a, b)
	if code != 0 {
		t.Fatalf("diff: exit %d: %s", code, stderr)
	}
	var cli []string
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, "step period "); ok && strings.Contains(l, "(p=") && !strings.HasPrefix(rest, "untraced") {
			// "2.03 ms ± 7%   1.39 ms ± 3%  −31% (p=0.029 n=4+4)"
			cells := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(rest), -1)
			pct, stat, _ := strings.Cut(cells[2], " (p=")
			cli = []string{cells[0], cells[1], pct, strings.Fields(stat)[0]}
		}
	}
	if len(cli) != 4 {
		t.Fatalf("no step period row in diff's output:\n%s", out)
	}
	screen, _ := tuiInTmux(t, `"$TL" tui '`+a+`' '`+b+`'`, "[6 Diff]", "step period")
	for _, l := range strings.Split(screen, "\n") {
		if !strings.Contains(l, "step period") {
			continue
		}
		for _, want := range cli {
			if !strings.Contains(l, want) {
				t.Errorf("the UI's step period row lacks %q of diff's %q:\n%s", want, cli, l)
			}
		}
		return
	}
	t.Errorf("no step period row on the UI's diff screen:\n%s", screen)
}

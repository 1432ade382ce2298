package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/tracelens/tracelens/analyze"
)

var (
	cliOnce sync.Once
	cliBin  string
	cliErr  error
)

// cliBinary builds tracelens once per test run.
func cliBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	cliOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tracelens-cli")
		if err != nil {
			cliErr = err
			return
		}
		cliBin = filepath.Join(dir, "tracelens")
		if out, err := exec.Command("go", "build", "-o", cliBin, ".").CombinedOutput(); err != nil {
			cliErr = errors.New(string(out))
		}
	})
	if cliErr != nil {
		t.Fatalf("go build: %v", cliErr)
	}
	return cliBin
}

// runCLI runs tracelens in process (runMain, what main calls) and returns
// stdout, stderr and the exit status. In process, because building and
// starting the binary for each of the package's hundreds of invocations
// cost most of its test time; TestBinarySmoke keeps one check of the
// built binary (exit codes, stdin, signals).
func runCLI(t *testing.T, stdin []byte, args ...string) (string, string, int) {
	t.Helper()
	var in io.Reader = bytes.NewReader(stdin)
	if stdin == nil {
		in = strings.NewReader("")
	}
	var o, e bytes.Buffer
	code := runMain(&env{stdin: in, stdout: &o, stderr: &e}, args)
	if strings.Contains(e.String(), "goroutine ") || strings.Contains(e.String(), "panic:") || strings.Contains(e.String(), "internal error") {
		t.Fatalf("a panic reached the user:\n%s", e.String())
	}
	return o.String(), e.String(), code
}

func fixture(name string) string { return filepath.Join("..", "..", "fixtures", name) }

func TestTopJSONMatchesSchemaAndOrder(t *testing.T) {
	out, stderr, code := runCLI(t, nil, "top", "--format", "json", "-n", "0", fixture("eggroll_hooks.json.gz"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Summary map[string]any   `json:"summary"`
		Kernels []map[string]any `json:"kernels"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"events", "kernel_launches", "distinct_kernels", "gpu_kernel_us", "device"} {
		if _, ok := got.Summary[k]; !ok {
			t.Errorf("summary lacks %q", k)
		}
	}
	if got.Summary["kernel_launches"] != 175.0 || got.Summary["distinct_kernels"] != 16.0 || got.Summary["device"] != "NVIDIA H100 80GB HBM3" {
		t.Errorf("summary %v", got.Summary)
	}
	if len(got.Kernels) != 16 {
		t.Fatalf("%d kernels, want 16", len(got.Kernels))
	}
	share := 0.0
	totals := []float64{}
	for _, k := range got.Kernels {
		for _, f := range []string{"name", "count", "total_us", "mean_us", "median_us", "p95_us", "min_us", "max_us", "share"} {
			if _, ok := k[f]; !ok {
				t.Errorf("kernel lacks %q", f)
			}
		}
		share += k["share"].(float64)
		totals = append(totals, k["total_us"].(float64))
		if k["min_us"].(float64) > k["median_us"].(float64) || k["median_us"].(float64) > k["p95_us"].(float64) || k["p95_us"].(float64) > k["max_us"].(float64) {
			t.Errorf("%s: min/median/p95/max out of order", k["name"])
		}
	}
	if !sort.SliceIsSorted(totals, func(i, j int) bool { return totals[i] > totals[j] }) {
		t.Errorf("kernels not sorted by total descending: %v", totals)
	}
	if share < 0.999 || share > 1.001 {
		t.Errorf("shares sum to %v", share)
	}
	if !strings.HasPrefix(got.Kernels[0]["name"].(string), "void gemmk1_kernel<int, float, 256, 5") {
		t.Errorf("top kernel %q, want the full gemmk1 name", got.Kernels[0]["name"])
	}
}

func TestTopTextFitsHundredColumns(t *testing.T) {
	for _, f := range []string{"eggroll_hooks.json.gz", "nanobragg_compile.json.gz", "triton_fused_matmul.json.gz"} {
		out, _, code := runCLI(t, nil, "top", "-n", "0", fixture(f))
		if code != 0 {
			t.Fatalf("%s: exit %d", f, code)
		}
		for _, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n > 100 {
				t.Errorf("%s: %d columns: %q", f, n, line)
			}
		}
		if !strings.Contains(out, "KERNEL") || !strings.Contains(out, "SHARE") {
			t.Errorf("%s: no table header:\n%s", f, out)
		}
	}
}

func TestTopSortOrders(t *testing.T) {
	out, _, code := runCLI(t, nil, "top", "--sort", "count", "--format", "json", "-n", "12", fixture("eggroll_hooks.json.gz"))
	if code != 0 {
		t.Fatal(code)
	}
	var got struct{ Kernels []struct{ Count int } }
	json.Unmarshal([]byte(out), &got)
	for i := 1; i < len(got.Kernels); i++ {
		if got.Kernels[i-1].Count < got.Kernels[i].Count {
			t.Fatalf("not sorted by count at %d", i)
		}
	}
	if len(got.Kernels) != 12 {
		t.Errorf("-n 12: %d rows", len(got.Kernels))
	}
}

func TestNoArgumentsRunsTheDemo(t *testing.T) {
	out, stderr, code := runCLI(t, nil)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "eggroll_hooks.json.gz") {
		t.Errorf("demo does not say which trace it used:\n%s", out)
	}
}

func TestInfoDescribesTheTrace(t *testing.T) {
	out, _, code := runCLI(t, nil, "info", fixture("jax_eggroll.perfetto.json.gz"))
	if code != 0 {
		t.Fatal(code)
	}
	for _, want := range []string{"format     jax (JAX)", "device 0 stream 14      150 kernels", "150 linked to their launch call", "skipped", "event without ph"} {
		if !strings.Contains(out, want) {
			t.Errorf("info lacks %q:\n%s", want, out)
		}
	}
}

func TestStdinIsDash(t *testing.T) {
	raw, _ := os.ReadFile(fixture("fusedlinear_naive.json.gz"))
	out, stderr, code := runCLI(t, raw, "top", "--format", "json", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, `"kernel_launches": 25`) {
		t.Errorf("stdin trace not read:\n%s", out)
	}
}

func TestBadInputExitsTwoWithFileAndOffset(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		return p
	}
	var gzBuf bytes.Buffer
	zw := gzip.NewWriter(&gzBuf)
	zw.Write([]byte(`{"traceEvents": [{"ph": "X", "name": "k"`))
	zw.Close()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"top", write("trunc.json", []byte(`{"traceEvents": [{"ph": "X", "name": "k"`))}, "trunc.json: invalid JSON at byte 40: unexpected end of input"},
		{[]string{"top", write("trunc.json.gz", gzBuf.Bytes())}, "trunc.json.gz: invalid JSON at decompressed byte 40"},
		{[]string{"info", write("empty.json", nil)}, "empty.json: empty file"},
		{[]string{"top", write("fake.json.gz", []byte("plain text, not gzip"))}, "fake.json.gz: invalid JSON at byte 0"},
		{[]string{"top", filepath.Join(dir, "missing.json")}, "missing.json: no such file or directory"},
		{[]string{"top", dir}, "trunc.json.gz: invalid JSON at decompressed byte 40"}, // a directory is a run: every rank's error
		{[]string{"top"}, "missing TRACE argument"},
		{[]string{"top", "-n", "x", fixture("fusedlinear_naive.json.gz")}, "invalid value"},
		{[]string{"top", "--sort", "fastest", fixture("fusedlinear_naive.json.gz")}, `unknown --sort "fastest"`},
		{[]string{"top", "--format", "xml", fixture("fusedlinear_naive.json.gz")}, `unknown --format "xml"`},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
	}
	for _, c := range cases {
		_, stderr, code := runCLI(t, nil, c.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2", c.args, code)
		}
		if !strings.Contains(stderr, c.want) {
			t.Errorf("%v: stderr %q, want %q", c.args, stderr, c.want)
		}
	}
}

func TestHelpExitsZero(t *testing.T) {
	out, _, code := runCLI(t, nil, "help")
	if code != 0 || !strings.Contains(out, "top") || !strings.Contains(out, "info") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
	out, _, code = runCLI(t, nil, "top", "-h")
	if code != 0 || !strings.Contains(out, "-sort") {
		t.Errorf("top -h: exit %d\n%s", code, out)
	}
}

// TestVersion: `tracelens version` and `--version` name the tool, the Go
// toolchain and the JSON schema version, and agree.
func TestVersion(t *testing.T) {
	a, _, code := runCLI(t, nil, "version")
	b, _, code2 := runCLI(t, nil, "--version")
	if code != 0 || code2 != 0 || a != b || !strings.HasPrefix(a, "tracelens ") || !strings.Contains(a, "go1.") ||
		!strings.Contains(a, fmt.Sprintf("JSON schema %d", analyze.SchemaVersion)) {
		t.Errorf("version %q (exit %d), --version %q (exit %d)", a, code, b, code2)
	}
	if _, _, code := runCLI(t, nil, "version", "extra"); code != 2 {
		t.Errorf("version with an argument: exit %d, want 2", code)
	}
}

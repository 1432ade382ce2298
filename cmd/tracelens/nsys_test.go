package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nsysExport returns the path of a shared Nsight Systems export, skipping
// when shared/ is not beside the checkout.
func nsysExport(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join("..", "..", "..", "shared", "traces", "nsys", name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared nsys exports not found (%v): they live in shared/traces/nsys beside the checkout", err)
	}
	return p
}

// TestNsysCommands runs info, top, findings and report on an Nsight
// Systems export, gzipped as stored and plain, and from standard input.
func TestNsysCommands(t *testing.T) {
	gz := nsysExport(t, "caoye310__Lower-Triangular-Solves__la.sqlite.gz")
	raw := gunzipFile(t, gz)
	plain := filepath.Join(t.TempDir(), "la.sqlite")
	if err := os.WriteFile(plain, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{gz, plain} {
		out, stderr, code := runCLI(t, nil, "info", p)
		if code != 0 {
			t.Fatalf("info %s: exit %d: %s", p, code, stderr)
		}
		for _, want := range []string{"format     nsys (CUDA C/C++), Nsight Systems 2023.3.1.92 (export schema 3.4.0)", "Tesla T4, 40 SMs", "kernels    1221, 1221 linked to their launch call", "1276 annotations", "  NVTX_EVENTS"} {
			if !strings.Contains(out, want) {
				t.Errorf("info %s lacks %q:\n%s", p, want, out)
			}
		}
	}
	out, stderr, code := runCLI(t, raw, "top", "--format", "json", "-")
	if code != 0 || !strings.Contains(out, `"kernel_launches": 1221`) {
		t.Errorf("top from stdin: exit %d, %s\n%s", code, stderr, out)
	}
	out, stderr, code = runCLI(t, nil, "findings", plain)
	if code != 0 || !strings.Contains(out, "pageable-memcpy") {
		t.Errorf("findings: exit %d, %s\n%s", code, stderr, out)
	}
	out, stderr, code = runCLI(t, nil, "report", gz)
	if code != 0 || !strings.Contains(out, "# Performance report") || !strings.Contains(out, "CUDA C/C++") {
		t.Errorf("report: exit %d, %s\n%s", code, stderr, out)
	}
	dir := t.TempDir()
	out, stderr, code = runCLI(t, nil, "export", "-o", dir, gz)
	if code != 0 || !strings.Contains(out, "1 traces exported") {
		t.Errorf("export: exit %d, %s\n%s", code, stderr, out)
	}
}

// TestNsysBadInputExitsTwo: a SQLite file that is not an export and a
// truncated export exit 2 with a message naming the file and the fault.
func TestNsysBadInputExitsTwo(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(filepath.Join("..", "..", "ingest", "testdata", "nsys", "synthetic.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.sqlite")
	os.WriteFile(cut, good[:len(good)-700], 0o644)
	for _, c := range []struct{ path, want string }{
		{filepath.Join("..", "..", "ingest", "testdata", "nsys", "notnsys.sqlite"), "notnsys.sqlite: a SQLite database, but not an Nsight Systems export"},
		{cut, "cut.sqlite: corrupt SQLite database at byte"},
	} {
		_, stderr, code := runCLI(t, nil, "info", c.path)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("info %s: exit %d, stderr %q, want 2 and %q", c.path, code, stderr, c.want)
		}
	}
}

// TestStepRange: --step-range NAME makes the NVTX ranges of that name the
// steps; a name no range has is exit 2 naming the commonest ranges.
func TestStepRange(t *testing.T) {
	p := nsysExport(t, "hpcgroup__pipit__saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz")
	out, stderr, code := runCLI(t, nil, "info", "--step-range", "saxpy", p)
	if code != 0 || !strings.Contains(out, "steps      5: #0 59.1µs") {
		t.Errorf("info --step-range saxpy: exit %d, %s\n%s", code, stderr, out)
	}
	out, stderr, code = runCLI(t, nil, "findings", p, "--step-range", "saxpy")
	if code != 0 || !strings.Contains(out, "5 steps") {
		t.Errorf("findings --step-range saxpy: exit %d, %s\n%s", code, stderr, out)
	}
	_, stderr, code = runCLI(t, nil, "top", "--step-range", "nope", p)
	if code != 2 || !strings.Contains(stderr, `no range named "nope" (the commonest ranges: "MPI_Send" ×10`) {
		t.Errorf("--step-range nope: exit %d, %s", code, stderr)
	}
}

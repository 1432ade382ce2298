package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// copyFixture copies a fixture into dir under name and returns its path.
func copyFixture(t *testing.T, fix, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(fixture(fix))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// report -o never overwrites an input: not by its path, nor through a
// symlink or a hard link to it. The input stays intact, exit 2 names both.
func TestReportRefusesToOverwriteInput(t *testing.T) {
	dir := t.TempDir()
	in := copyFixture(t, "fusedlinear_naive.json.gz", dir, "trace.json")
	want, _ := os.ReadFile(in)
	link := filepath.Join(dir, "link.json")
	hard := filepath.Join(dir, "hard.json")
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{in, link, hard} {
		_, stderr, code := runCLI(t, nil, "report", "-o", out, in)
		if code != exitUsageOrBad || !strings.Contains(stderr, out) || !strings.Contains(stderr, in) {
			t.Errorf("report -o %s %s: exit %d, stderr %q: want 2 naming both", out, in, code, stderr)
		}
		if got, _ := os.ReadFile(in); !bytes.Equal(got, want) {
			t.Fatalf("report -o %s overwrote the input", out)
		}
	}
	// A run directory's rank files are inputs too.
	run := t.TempDir()
	r0 := copyFixture(t, "runs/two_groups/rank0.pt.trace.json.gz", run, "rank0.json")
	copyFixture(t, "runs/two_groups/rank1.pt.trace.json.gz", run, "rank1.json")
	if _, stderr, code := runCLI(t, nil, "report", "-o", r0, "--format", "md", run); code != exitUsageOrBad || !strings.Contains(stderr, "rank0.json") {
		t.Errorf("report -o RANK DIR: exit %d, stderr %q", code, stderr)
	}
	// export -o naming an input file is refused before anything is made.
	if _, stderr, code := runCLI(t, nil, "export", "-o", in, in); code != exitUsageOrBad || !strings.Contains(stderr, "refusing") {
		t.Errorf("export -o INPUT: exit %d, stderr %q", code, stderr)
	}
}

// Exporting day2/rank0.json into a dataset holding day1/rank0.json's run
// "rank0" is refused, naming the existing source, and day one's tables
// stay; --force replaces them; re-exporting the same path after the trace
// changed replaces them without --force.
func TestExportRefusesToReplaceAnotherSource(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	day1 := copyFixture(t, "fusedlinear_naive.json.gz", dir, "day1/rank0.json.gz")
	day2 := copyFixture(t, "fusedlinear_cublas.json.gz", dir, "day2/rank0.json.gz")
	if _, stderr, code := runCLI(t, nil, "export", "-o", out, day1); code != exitOK {
		t.Fatalf("day 1: exit %d: %s", code, stderr)
	}
	runs := filepath.Join(out, "runs", "rank0.parquet")
	before, _ := os.ReadFile(runs)
	_, stderr, code := runCLI(t, nil, "export", "-o", out, day2)
	if code != exitUsageOrBad || !strings.Contains(stderr, day1) || !strings.Contains(stderr, "--force") {
		t.Errorf("day 2: exit %d, stderr %q: want 2 naming %s and --force", code, stderr, day1)
	}
	if after, _ := os.ReadFile(runs); !bytes.Equal(before, after) {
		t.Fatal("day 2 replaced day 1's runs table")
	}
	if _, stderr, code := runCLI(t, nil, "export", "--force", "-o", out, day2); code != exitOK {
		t.Errorf("day 2 --force: exit %d: %s", code, stderr)
	}
	copyFixture(t, "fusedlinear_naive.json.gz", dir, "day2/rank0.json.gz")
	if stdout, stderr, code := runCLI(t, nil, "export", "-o", out, day2); code != exitOK || !strings.Contains(stdout, "1 traces exported") {
		t.Errorf("same source, new content: exit %d, stdout %s, stderr %s", code, stdout, stderr)
	}
}

// runCLIWithin is runCLI that fails the test, instead of hanging it, when
// the command takes longer than limit.
func runCLIWithin(t *testing.T, limit time.Duration, args ...string) (string, string, int) {
	t.Helper()
	type result struct {
		out, errOut string
		code        int
	}
	done := make(chan result, 1)
	go func() {
		var o, e bytes.Buffer
		code := runMain(&env{stdin: strings.NewReader(""), stdout: &o, stderr: &e}, args)
		done <- result{o.String(), e.String(), code}
	}()
	select {
	case r := <-done:
		return r.out, r.errOut, r.code
	case <-time.After(limit):
		t.Fatalf("%v: still running after %s (blocked?)", args, limit)
		return "", "", 0
	}
}

// A FIFO, a socket or a device named *.json in a run directory is
// skipped by every command that reads the directory (export blocked
// forever on a FIFO); a symlink to a rank file is read.
func TestDirectorySkipsSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	copyFixture(t, "runs/two_groups/rank0.pt.trace.json.gz", dir, "run/rank0.json.gz")
	r1 := copyFixture(t, "runs/two_groups/rank1.pt.trace.json.gz", dir, "elsewhere/rank1.json.gz")
	run := filepath.Join(dir, "run")
	if err := os.Symlink(r1, filepath.Join(run, "rank1.json.gz")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(run, "rank2.json"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.Symlink(filepath.Join(run, "loop.json"), filepath.Join(run, "loop.json")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"export", "-o", filepath.Join(dir, "out"), run},
		{"info", run}, {"top", run}, {"findings", run}, {"report", run},
	} {
		stdout, stderr, code := runCLIWithin(t, time.Minute, args...)
		if code != exitOK {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
		if args[0] == "export" && !strings.Contains(stdout, "2 traces exported") {
			t.Errorf("export: want both ranks (one through a symlink), got %s", stdout)
		}
	}
}

// Output that cannot be written (stdout is /dev/full) is exit 2 with a
// message in every command and format: info, top, findings (text) and
// analyzers, also on a run directory, exited 0.
func TestUnwritableStdoutExits2(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	trace, run := fixture("fusedlinear_naive.json.gz"), fixture("runs/two_groups")
	for _, args := range [][]string{
		{"info", trace}, {"top", trace}, {"findings", trace}, {"analyzers"}, {"findings", run},
		{"info", run}, {"top", run}, {"top", "--format", "json", trace}, {"report", trace}, {"help"},
	} {
		var stderr bytes.Buffer
		code := runMain(&env{stdin: strings.NewReader(""), stdout: full, stderr: &stderr}, args)
		if code != exitUsageOrBad || !strings.Contains(stderr.String(), "no space left") {
			t.Errorf("%v > /dev/full: exit %d, stderr %q: want exit 2 saying why", args, code, stderr.String())
		}
	}
}

// writeGzip writes data gzip-compressed to path.
func writeGzip(t *testing.T, path string, data []byte) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// gunzipFixture returns a gzip fixture's JSON text.
func gunzipFixture(t *testing.T, name string) []byte {
	t.Helper()
	return gunzipFile(t, fixture(name))
}

// gunzipFile returns a gzip file's decompressed bytes.
func gunzipFile(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Rank files of two jobs in one directory are refused (exit 2, naming
// both files and the field that differs) instead of merged into a run
// with an invented clock offset and straggler: a different world size, a
// process group of one name configured differently, or clocks hours
// apart. Kineto's trace_id differs between ranks of one job, so it is not
// evidence (the fixture's ranks have two).
func TestRunOfTwoJobsRefused(t *testing.T) {
	rank0 := gunzipFixture(t, "runs/two_groups/rank0.pt.trace.json.gz")
	rank1 := gunzipFixture(t, "runs/two_groups/rank1.pt.trace.json.gz")
	for _, c := range []struct{ name, old, new, field string }{
		{"world", `"world_size": 2`, `"world_size": 4`, "world_size"},
		{"group", `"pg_desc": "mesh_tp"`, `"pg_desc": "mesh_cp"`, "pg_desc"},
		// 5.7 hours later on the wall clock: another job's capture.
		{"clock", `"baseTimeNanoseconds": 1790857026000000000`, `"baseTimeNanoseconds": 1790877546000000000`, "clock"},
	} {
		if !bytes.Contains(rank1, []byte(c.old)) {
			t.Fatalf("%s: fixture lacks %s", c.name, c.old)
		}
		dir := t.TempDir()
		writeGzip(t, filepath.Join(dir, "rank0.json.gz"), rank0)
		writeGzip(t, filepath.Join(dir, "rank1.json.gz"), bytes.Replace(rank1, []byte(c.old), []byte(c.new), 1))
		for _, cmd := range []string{"info", "report", "findings"} {
			_, stderr, code := runCLI(t, nil, cmd, dir)
			if code != exitUsageOrBad || !strings.Contains(stderr, "rank0.json.gz") || !strings.Contains(stderr, "rank1.json.gz") ||
				!strings.Contains(stderr, c.field) || !strings.Contains(stderr, "not ranks of one job") {
				t.Errorf("%s: %s DIR: exit %d, stderr %q: want 2 naming both files and %s", c.name, cmd, code, stderr, c.field)
			}
		}
	}
	// The same job, regenerated, is still one run.
	dir := t.TempDir()
	writeGzip(t, filepath.Join(dir, "rank0.json.gz"), rank0)
	writeGzip(t, filepath.Join(dir, "rank1.json.gz"), rank1)
	if _, stderr, code := runCLI(t, nil, "info", dir); code != exitOK {
		t.Errorf("one job: exit %d, stderr %q", code, stderr)
	}
}

// hugeStringReader yields a trace whose one kernel's name is n bytes of
// 'a' (endless when n < 0), generated as it is read: the attack of a huge
// JSON string without a huge file.
type hugeStringReader struct {
	head, tail []byte
	n          int64
	chunk      []byte
}

func newHugeString(n int64) *hugeStringReader {
	return &hugeStringReader{
		head:  []byte(`{"traceEvents":[{"ph":"X","cat":"kernel","ts":1,"dur":1,"pid":0,"tid":7,"name":"`),
		tail:  []byte(`"}]}`),
		n:     n,
		chunk: bytes.Repeat([]byte("a"), 1<<20),
	}
}

func (h *hugeStringReader) Read(p []byte) (int, error) {
	switch {
	case len(h.head) > 0:
		k := copy(p, h.head)
		h.head = h.head[k:]
		return k, nil
	case h.n != 0:
		k := len(p)
		if h.n > 0 {
			k = int(min(int64(k), h.n))
			h.n -= int64(k)
		}
		for i := 0; i < k; i += len(h.chunk) {
			copy(p[i:k], h.chunk)
		}
		return k, nil
	case len(h.tail) > 0:
		k := copy(p, h.tail)
		h.tail = h.tail[k:]
		return k, nil
	}
	return 0, io.EOF
}

// One huge JSON string is refused under --max-memory while it is scanned,
// with exit 2 naming the file and the byte offset, instead of growing
// the process without bound: a 512 MiB kernel name in a gzip file of a
// few MB at most, and an endless string on standard input.
func TestHugeStringRefusedUnderBudget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.json.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	if _, err := io.Copy(zw, newHugeString(512<<20)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, cmd := range []string{"info", "top", "export"} {
		args := []string{cmd, "--max-memory", "64MB", path}
		if cmd == "export" {
			args = append(args, "-o", t.TempDir())
		}
		_, stderr, code := runCLIWithin(t, time.Minute, args...)
		if code != exitUsageOrBad || !strings.Contains(stderr, path) || !strings.Contains(stderr, "at byte 16 of the decompressed JSON") ||
			!strings.Contains(stderr, "--max-memory") {
			t.Errorf("%v: exit %d, stderr %q: want 2 naming the file, the byte offset and --max-memory", args, code, stderr)
		}
	}
	var stderr bytes.Buffer
	code := runMain(&env{stdin: newHugeString(-1), stdout: io.Discard, stderr: &stderr}, []string{"top", "--max-memory", "64MB", "-"})
	if code != exitUsageOrBad || !strings.Contains(stderr.String(), "at byte 16") {
		t.Errorf("endless string on stdin: exit %d, stderr %q", code, stderr.String())
	}
}

package export_test

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/tracelens/tracelens/export"
)

// copyFixture copies a repository fixture into dir under name.
func copyFixture(t *testing.T, fixture, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../fixtures", fixture))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func exportAll(t *testing.T, out string, force bool, paths ...string) []export.Outcome {
	t.Helper()
	ins, err := export.Inputs(paths)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := export.Run(ins, export.Options{Dir: out, Workers: 2, Force: force})
	if err != nil {
		t.Fatal(err)
	}
	return outs
}

func statuses(outs []export.Outcome) string {
	var s []string
	for _, o := range outs {
		s = append(s, o.Run+":"+o.Status.String())
	}
	return strings.Join(s, " ")
}

func sha(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

// An export run twice skips what is up to date, redoes an input whose
// content changed under the same name, and redoes a run whose export was
// interrupted (its runs file, written last, missing).
func TestResumeByContentHash(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	a := copyFixture(t, "fusedlinear_naive.json.gz", in, "a.json.gz")
	b := copyFixture(t, "fusedlinear_cublas.json.gz", in, "b.json.gz")

	if got := statuses(exportAll(t, out, false, a, b)); got != "a:exported b:exported" {
		t.Fatalf("first export: %s", got)
	}
	kernelsA := filepath.Join(out, "kernels", "a.parquet")
	before, err := os.Stat(kernelsA)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	if got := statuses(exportAll(t, out, false, a, b)); got != "a:up to date b:up to date" {
		t.Fatalf("second export: %s", got)
	}
	if after, _ := os.Stat(kernelsA); !after.ModTime().Equal(before.ModTime()) {
		t.Error("an up-to-date run's kernels file was rewritten")
	}

	copyFixture(t, "eggroll_direct.json.gz", in, "a.json.gz")
	if got := statuses(exportAll(t, out, false, a, b)); got != "a:exported b:up to date" {
		t.Fatalf("after changing a: %s", got)
	}
	runs, err := parquet.ReadFile[export.RunRow](filepath.Join(out, "runs", "a.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].ContentHash != sha(t, a) || runs[0].Run != "a" || runs[0].SchemaVersion != export.SchemaVersion {
		t.Errorf("runs row after re-export: %+v, want hash %s", runs, sha(t, a))
	}
	kernels, err := parquet.ReadFile[export.KernelRow](kernelsA)
	if err != nil {
		t.Fatal(err)
	}
	if len(kernels) != 175 { // eggroll_direct's GPU activities (tracelens info)
		t.Errorf("a's kernels table has %d rows after re-export, want eggroll_direct's 175", len(kernels))
	}

	if err := os.Remove(filepath.Join(out, "runs", "b.parquet")); err != nil {
		t.Fatal(err)
	}
	if got := statuses(exportAll(t, out, false, a, b)); got != "a:up to date b:exported" {
		t.Fatalf("after losing b's runs file: %s", got)
	}
	if got := statuses(exportAll(t, out, true, a, b)); got != "a:exported b:exported" {
		t.Fatalf("with force: %s", got)
	}

	// An input that became unreadable loses its old tables.
	if err := os.WriteFile(b, []byte(`{"traceEvents": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := statuses(exportAll(t, out, false, a, b)); got != "a:up to date b:failed" {
		t.Fatalf("after breaking b: %s", got)
	}
	for _, tbl := range export.Tables() {
		if _, err := os.Stat(filepath.Join(out, tbl, "b.parquet")); err == nil {
			t.Errorf("%s still holds b's table from before it broke", tbl)
		}
	}
}

// A broken input fails alone, with an error naming the file and the byte
// offset, and leaves no table files (not even temporary ones) behind.
func TestBadInputFailsAlone(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	good := copyFixture(t, "fusedlinear_naive.json.gz", in, "good.json.gz")
	raw, err := os.ReadFile(filepath.Join("../fixtures", "fusedlinear_naive.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(in, "bad.json")
	if err := os.WriteFile(bad, text[:len(text)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	outs := exportAll(t, out, false, good, bad)
	if got := statuses(outs); got != "good:exported bad:failed" {
		t.Fatalf("statuses: %s", got)
	}
	if msg := outs[1].Err.Error(); !strings.Contains(msg, bad) || !strings.Contains(msg, "byte") {
		t.Errorf("error %q does not name the file and byte offset", msg)
	}
	for _, tbl := range export.Tables() {
		entries, err := os.ReadDir(filepath.Join(out, tbl))
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 || entries[0].Name() != "good.parquet" {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("%s holds %v, want only good.parquet", tbl, names)
		}
	}
}

func TestInputs(t *testing.T) {
	in := t.TempDir()
	for _, d := range []string{"nightly/2026-11-01", "nightly/2026-11-02"} {
		if err := os.MkdirAll(filepath.Join(in, d), 0o755); err != nil {
			t.Fatal(err)
		}
		copyFixture(t, "fusedlinear_naive.json.gz", filepath.Join(in, d), "rank0.pt.trace.json.gz")
	}
	if err := os.WriteFile(filepath.Join(in, "nightly", "notes.txt"), []byte("not a trace"), 0o644); err != nil {
		t.Fatal(err)
	}
	ins, err := export.Inputs([]string{filepath.Join(in, "nightly")})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, i := range ins {
		names = append(names, i.Run)
	}
	if got := strings.Join(names, " "); got != "nightly__2026-11-01__rank0 nightly__2026-11-02__rank0" {
		t.Errorf("run names: %s", got)
	}
	_, err = export.Inputs([]string{filepath.Join(in, "nightly/2026-11-01/rank0.pt.trace.json.gz"), filepath.Join(in, "nightly/2026-11-02/rank0.pt.trace.json.gz")})
	if err == nil || !strings.Contains(err.Error(), `run "rank0"`) {
		t.Errorf("two inputs named rank0: err = %v, want a collision naming both", err)
	}
	if _, err := export.Inputs([]string{filepath.Join(in, "missing.json")}); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing input: err = %v", err)
	}
}

// Progress counts bytes up to the inputs' total without going back, and
// every input once, whatever its outcome.
func TestProgress(t *testing.T) {
	in := t.TempDir()
	a := copyFixture(t, "nanobragg_compile.json.gz", in, "a.json.gz")
	b := copyFixture(t, "eggroll_hooks.json.gz", in, "b.json.gz")
	bad := filepath.Join(in, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"traceEvents": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	ins, err := export.Inputs([]string{a, b, bad})
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, p := range []string{a, b, bad} {
		st, _ := os.Stat(p)
		total += st.Size()
	}
	var seen []export.Progress
	if _, err := export.Run(ins, export.Options{Dir: t.TempDir(), Workers: 2, Progress: func(p export.Progress) { seen = append(seen, p) }}); err != nil {
		t.Fatal(err)
	}
	last := seen[len(seen)-1]
	if last.Done != 3 || last.Total != 3 || last.DoneBytes != total || last.TotalBytes != total {
		t.Errorf("last progress %+v, want 3/3 inputs and %d/%d bytes", last, total, total)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i].DoneBytes < seen[i-1].DoneBytes || seen[i].Done < seen[i-1].Done {
			t.Errorf("progress went back: %+v after %+v", seen[i], seen[i-1])
		}
	}
}

// A JSON file beside the traces in a directory (expected values, run
// metadata) is passed over; named on its own it is an error.
func TestNonTraceJSONInADirectory(t *testing.T) {
	in := t.TempDir()
	copyFixture(t, "fusedlinear_naive.json.gz", in, "rank0.json.gz")
	meta := filepath.Join(in, "expected.json")
	if err := os.WriteFile(meta, []byte(`{"steps": 5, "kernels": {"gemm": 25}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	outs := exportAll(t, t.TempDir(), false, in)
	base := filepath.Base(in)
	if got, want := statuses(outs), base+"__expected:not a trace "+base+"__rank0:exported"; got != want {
		t.Errorf("directory: %s, want %s", got, want)
	}
	outs = exportAll(t, t.TempDir(), false, meta)
	if outs[0].Status != export.Failed || !strings.Contains(outs[0].Err.Error(), "expected.json") {
		t.Errorf("named on its own: %s %v", outs[0].Status, outs[0].Err)
	}
}

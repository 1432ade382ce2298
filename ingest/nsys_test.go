package ingest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// nsysDir holds ten real Nsight Systems exports with reference figures
// (shared/traces/nsys/README.md); CI has shared/ beside the checkout.
const nsysDir = "../../shared/traces/nsys"

// nsysRef is one line of expected.tsv.
type nsysRef struct {
	file                 string
	kernels              int
	kernelNs             int64
	memcpy, memset, nvtx int // table rows (-1: table absent)
}

func nsysRefs(t testing.TB) []nsysRef {
	t.Helper()
	f, err := os.Open(filepath.Join(nsysDir, "expected.tsv"))
	if err != nil {
		t.Skipf("shared nsys exports not found (%v): they live in shared/traces/nsys beside the checkout", err)
	}
	defer f.Close()
	atoi := func(s string) int {
		n, err := strconv.Atoi(s)
		if err != nil {
			return -1
		}
		return n
	}
	var refs []nsysRef
	col := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Split(sc.Text(), "\t")
		if fs[0] == "file" {
			for i, h := range fs {
				col[h] = i
			}
			continue
		}
		get := func(h string) string {
			i, ok := col[h]
			if !ok || i >= len(fs) {
				t.Fatalf("expected.tsv: no column %s", h)
			}
			return fs[i]
		}
		ns, err := strconv.ParseInt(get("kernel_total_ns"), 10, 64)
		if err != nil {
			t.Fatalf("expected.tsv: %s: kernel total %q", fs[0], get("kernel_total_ns"))
		}
		refs = append(refs, nsysRef{file: fs[0], kernels: atoi(get("kernel_count")), kernelNs: ns,
			memcpy: atoi(get("MEMCPY")), memset: atoi(get("MEMSET")), nvtx: atoi(get("NVTX_EVENTS"))})
	}
	if len(refs) != 10 {
		t.Fatalf("expected.tsv lists %d exports, want 10", len(refs))
	}
	return refs
}

// TestNsysExports reads every shared export (gzipped, as stored) and
// checks kernels ns-exact against sqlite3's figures, copies, memsets and
// NVTX ranges against the table rows, and launch links.
func TestNsysExports(t *testing.T) {
	for _, ref := range nsysRefs(t) {
		t.Run(ref.file, func(t *testing.T) {
			tr, err := ReadFile(filepath.Join(nsysDir, ref.file), Options{Workers: 3})
			if err != nil {
				t.Fatal(err)
			}
			// Tables are read in parallel parts: the model must not
			// depend on how many.
			serial, err := ReadFile(filepath.Join(nsysDir, ref.file), Options{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(tr, serial) {
				t.Error("the model read by 3 workers differs from the one read by 1")
			}
			checkModel(t, tr)
			if tr.Meta.Format != "nsys" {
				t.Errorf("format %q", tr.Meta.Format)
			}
			checkFramework(t, ref.file, tr)
			var n [3]int
			var kernelNs int64
			linked := 0
			for i := range tr.GPU {
				g := &tr.GPU[i]
				n[g.Kind]++
				if g.Kind == trace.Kernel {
					kernelNs += int64(g.Dur())
					if g.Launch != trace.None {
						linked++
						if a := tr.APICalls[g.Launch]; !strings.Contains(a.Name, "Launch") {
							t.Errorf("kernel %s launched by %s", g.Name, a.Name)
						}
					}
					if g.Name == "" {
						t.Errorf("kernel without a name at %d", g.Start)
					}
				}
			}
			if n[trace.Kernel] != ref.kernels || kernelNs != ref.kernelNs {
				t.Errorf("%d kernels, %d ns; want %d, %d ns", n[trace.Kernel], kernelNs, ref.kernels, ref.kernelNs)
			}
			// Every kernel's correlation id matches a RUNTIME row.
			if linked != ref.kernels {
				t.Errorf("%d of %d kernels linked to their launch", linked, ref.kernels)
			}
			if want := max(ref.memcpy, 0); n[trace.Memcpy] != want {
				t.Errorf("%d memcpys, want %d", n[trace.Memcpy], want)
			}
			if want := max(ref.memset, 0); n[trace.Memset] != want {
				t.Errorf("%d memsets, want %d", n[trace.Memset], want)
			}
			ranges := 0
			for _, c := range tr.Categories {
				if c.Category == tabNVTX {
					ranges = c.Count
				}
			}
			if ranges != max(ref.nvtx, 0) {
				t.Errorf("%d NVTX rows read, want %d", ranges, max(ref.nvtx, 0))
			}
			if len(tr.Meta.Devices) == 0 || tr.DeviceName() == "" {
				t.Errorf("no device: %+v", tr.Meta.Devices)
			}
			if len(tr.Steps) == 0 {
				t.Error("no steps")
			}
			t.Logf("%s: %d kernels (%d ns) %d memcpy %d memset, %d API calls, %d annotations, %d threads; warnings %q; skipped %+v",
				tr.DeviceName(), n[0], kernelNs, n[1], n[2], len(tr.APICalls), len(tr.Annotations), len(tr.Threads), tr.Warnings, tr.Skipped)
		})
	}
}

// checkFramework: the PyTorch runs (aten:: NVTX ranges, at::native
// kernels) are told from the native CUDA C/C++ programs.
func checkFramework(t *testing.T, file string, tr *trace.Trace) {
	t.Helper()
	fw := trace.FrameworkCUDA
	for _, py := range []string{"Fuser", "mmagic", "DLProf"} {
		if strings.Contains(file, py) {
			fw = "PyTorch"
		}
	}
	if tr.Meta.Framework != fw {
		t.Errorf("framework %q, want %q", tr.Meta.Framework, fw)
	}
}

// TestNsysSynthetic reads a small hand-made export (testdata/nsys/
// synthetic.sql): 512-byte pages, a kernel name on overflow pages, a
// start stored as text, a RUNTIME table without correlationId, NVTX text
// by id, a mark and a range that never ended.
func TestNsysSynthetic(t *testing.T) {
	tr, err := ReadFile("testdata/nsys/synthetic.sqlite", Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkModel(t, tr)
	if tr.Kernels() != 302 {
		t.Errorf("%d kernels, want 302 (the row with a text start skipped)", tr.Kernels())
	}
	var total trace.Duration
	long := 0
	for i := range tr.GPU {
		total += tr.GPU[i].Dur()
		if len(tr.GPU[i].Name) == 3002 {
			long++
		}
		if g := tr.GPU[i]; g.Grid != [3]int32{64, 1, 1} || g.Block != [3]int32{256, 1, 1} || g.Registers != 32 || g.SharedMem != 1024 {
			t.Fatalf("launch configuration %v %v %d %d", g.Grid, g.Block, g.Registers, g.SharedMem)
		}
	}
	if total != 165000 || long != 30 {
		t.Errorf("kernel total %d ns, %d long names; want 165000, 30", total, long)
	}
	var names []string
	for _, a := range tr.Annotations {
		names = append(names, a.Name)
	}
	if strings.Join(names, ",") != "step,inner,step,step" {
		t.Errorf("annotations %q", names)
	}
	if tr.APICalls[0].Name != "cudaLaunchKernel" || tr.Threads[0].PID != "1" || tr.Threads[0].TID != "77" {
		t.Errorf("API call %q on thread %+v", tr.APICalls[0].Name, tr.Threads[0])
	}
	warnings := strings.Join(tr.Warnings, "\n")
	for _, want := range []string{"CUPTI_ACTIVITY_KIND_RUNTIME lacks the column(s) correlationId", "no export metadata table", "tables absent",
		"GPU work from 2 processes is analyzed as one trace",
		"CUPTI_ACTIVITY_KIND_KERNEL: 1 row names a StringIds id that StringIds lacks"} {
		if !strings.Contains(warnings, want) {
			t.Errorf("warnings lack %q:\n%s", want, warnings)
		}
	}
	skips := map[string]int{}
	for _, s := range tr.Skipped {
		skips[s.Reason] = s.Count
		if s.FirstOffset <= 0 {
			t.Errorf("skip %q at byte %d", s.Reason, s.FirstOffset)
		}
	}
	if skips["CUPTI_ACTIVITY_KIND_KERNEL row whose start is a TEXT"] != 1 || skips["NVTX ranges that never ended"] != 1 || skips["NVTX marks (instants: not modelled)"] != 1 {
		t.Errorf("skipped %v", skips)
	}
}

// TestNsysBadInput: a SQLite file that is no export, truncated and
// corrupted exports are errors that say what is wrong, never a panic or
// an empty trace.
func TestNsysBadInput(t *testing.T) {
	good, err := os.ReadFile("testdata/nsys/synthetic.sqlite")
	if err != nil {
		t.Fatal(err)
	}
	notNsys, _ := os.ReadFile("testdata/nsys/notnsys.sqlite")
	corrupt := func(at int, b ...byte) []byte {
		c := bytes.Clone(good)
		copy(c[at:], b)
		return c
	}
	cases := []struct {
		name string
		in   []byte
		want string
	}{
		{"not nsys", notNsys, "a SQLite database, but not an Nsight Systems export: an export has a StringIds table"},
		{"header only", good[:100], "file size 100 is not a multiple of the page size 512"},
		{"cut mid-page", good[:len(good)-100], "is not a multiple of the page size"},
		{"cut at a page", good[:len(good)-1024], "the header says 61 pages but the file holds 59 (truncated)"},
		{"bad page size", corrupt(16, 0x03, 0x00), "corrupt SQLite database at byte 16: page size 768"},
		{"root page type", corrupt(512, 0x07), "has B-tree page type 0x7"},
		{"UTF-16", corrupt(56, 0, 0, 0, 2), "UTF-16"},
	}
	for _, c := range cases {
		_, err := Read(bytes.NewReader(c.in), "x.sqlite", Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// Every cut of a real export fails cleanly or reads.
	for n := 0; n < len(good); n += 509 {
		if tr, err := Read(bytes.NewReader(good[:n]), "x", Options{}); err == nil {
			checkModel(t, tr)
		} else if strings.Contains(err.Error(), "internal error") {
			t.Fatalf("cut at %d: %v", n, err)
		}
	}
}

// FuzzNsys feeds mutated SQLite files to the nsys reader: it must never
// panic (readNsys turns a panic into an "internal error"), and what it
// accepts must be a consistent model.
func FuzzNsys(f *testing.F) {
	good, err := os.ReadFile("testdata/nsys/synthetic.sqlite")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:4096])
	notNsys, _ := os.ReadFile("testdata/nsys/notnsys.sqlite")
	f.Add(notNsys)
	// Real pages: the smallest shared exports (a few hundred KB each, so
	// taken from shared/ rather than kept in testdata), when present.
	for _, name := range []string{"extra-p__extrap__profile16.sqlite.gz", "bwyogatama__Mordred-Deprecated__report1.sqlite.gz"} {
		if _, err := os.Stat(filepath.Join(nsysDir, name)); err == nil {
			f.Add(sharedExport(f, name))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		tr, err := readNsys(bytes.NewReader(in), int64(len(in)), 2)
		if err != nil {
			if strings.Contains(err.Error(), "internal error") {
				t.Fatal(err)
			}
			return
		}
		checkModel(t, tr)
		// top's kernels-only read of an export the full read accepts
		// gives the same kernels (Launch aside: it links nothing).
		ts, err := readNsysAll(bytes.NewReader(in), int64(len(in)), nsysOptions{workers: 2, kernelsOnly: true})
		if err != nil {
			t.Fatalf("the full read succeeds, the kernels-only read fails: %v", err)
		}
		var want []trace.GPUActivity
		for _, g := range tr.GPU {
			if g.Kind == trace.Kernel {
				g.Launch = trace.None
				want = append(want, g)
			}
		}
		if got := ts[0].GPU; !slices.Equal(got, want) || ts[0].Events != tr.Events {
			t.Fatalf("kernels-only read: %d kernels, %d events; full read %d, %d", len(got), ts[0].Events, len(want), tr.Events)
		}
	})
}

// TestNsysStreams reads an export from a pipe-like reader (spooled to a
// temporary file), gzipped and plain, and says what a Git LFS pointer is.
func TestNsysStreams(t *testing.T) {
	good, err := os.ReadFile("testdata/nsys/synthetic.sqlite")
	if err != nil {
		t.Fatal(err)
	}
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(good)
	zw.Close()
	for name, in := range map[string][]byte{"plain": good, "gzip": zb.Bytes()} {
		tr, err := Read(struct{ io.Reader }{bytes.NewReader(in)}, name, Options{})
		if err != nil || tr.Kernels() != 302 {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Read(bytes.NewReader(zb.Bytes()[:zb.Len()-40]), "cut.gz", Options{}); err == nil || !strings.Contains(err.Error(), "corrupt gzip data after") {
		t.Errorf("cut gzip: %v", err)
	}
	lfs := "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a\nsize 2011136\n"
	p := filepath.Join(t.TempDir(), "report.sqlite")
	os.WriteFile(p, []byte(lfs), 0o644)
	if _, err := ReadFile(p, Options{}); err == nil || !strings.Contains(err.Error(), "report.sqlite: a Git LFS pointer, not the trace of 2011136 bytes: fetch the file with git lfs pull") {
		t.Errorf("LFS pointer: %v", err)
	}
}

package ingest

import (
	"bufio"
	"os"
	"path/filepath"
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
			tr, err := ReadFile(filepath.Join(nsysDir, ref.file), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tr.Meta.Format != "nsys" {
				t.Errorf("format %q", tr.Meta.Format)
			}
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
			t.Logf("%s: %d kernels %d memcpy %d memset, %d API calls, %d annotations, %d threads; warnings %q; skipped %+v",
				tr.DeviceName(), n[0], n[1], n[2], len(tr.APICalls), len(tr.Annotations), len(tr.Threads), tr.Warnings, tr.Skipped)
		})
	}
}

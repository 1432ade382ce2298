package ingest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracelens/tracelens/fixtures/sharedtest"
	"github.com/tracelens/tracelens/trace"
)

// sharedExport reads one shared export, decompressed.
func sharedExport(t testing.TB, name string) []byte {
	t.Helper()
	return sharedtest.NsysExport(t, name)
}

// writeExport writes an export from sources into a temporary file.
func writeExport(t testing.TB, sources []NsysSource) (string, *NsysStats) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gen.sqlite")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	st, err := WriteNsys(f, sources)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p, st
}

// TestNsysGenCopies: an export of n copies of a real one's events (what
// fixtures/gen -class nsys writes) reads back with n times its kernels,
// n times their total, every kernel linked to its launch, and copies
// that follow each other in time.
func TestNsysGenCopies(t *testing.T) {
	const name = "caoye310__Lower-Triangular-Solves__la.sqlite.gz"
	var ref nsysRef
	for _, r := range nsysRefs(t) {
		if r.file == name {
			ref = r
		}
	}
	raw := sharedExport(t, name)
	const n = 3
	p, st := writeExport(t, []NsysSource{{R: bytes.NewReader(raw), Size: int64(len(raw)), Copies: n}})
	if st.Kernels != n*ref.kernels {
		t.Errorf("wrote %d kernels, want %d", st.Kernels, n*ref.kernels)
	}
	tr, err := ReadFile(p, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	checkModel(t, tr)
	var ns int64
	linked := 0
	for i := range tr.GPU {
		if g := &tr.GPU[i]; g.Kind == trace.Kernel {
			ns += int64(g.Dur())
			if g.Launch != trace.None {
				linked++
			}
		}
	}
	if tr.Kernels() != n*ref.kernels || ns != n*ref.kernelNs || linked != n*ref.kernels {
		t.Errorf("%d kernels, %d ns, %d linked; want %d, %d ns, all linked", tr.Kernels(), ns, linked, n*ref.kernels, n*ref.kernelNs)
	}
	one, err := Read(bytes.NewReader(raw), name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Annotations) != n*len(one.Annotations) || len(tr.APICalls) != n*len(one.APICalls) {
		t.Errorf("%d NVTX ranges and %d API calls, want %d and %d", len(tr.Annotations), len(tr.APICalls), n*len(one.Annotations), n*len(one.APICalls))
	}
	if span, want := tr.Span().Dur(), one.Span().Dur()*n; span < want {
		t.Errorf("the copies span %d ns, less than %d: they overlap", span, want)
	}
}

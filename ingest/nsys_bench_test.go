package ingest

import (
	"bytes"
	"os"
	"strconv"
	"testing"
)

// BenchmarkNsysRead reads an Nsight Systems export made of copies of a
// real one's events (as fixtures/gen -class nsys writes; about 100 MB, or
// TRACELENS_NSYS_BENCH_MB), from a file, as tracelens top does. The
// numbers at 1 GB, with wall, CPU and peak RSS of the whole command, are
// in docs/bench-nsys.md.
func BenchmarkNsysRead(b *testing.B) {
	for _, c := range []struct {
		name string
		opt  Options
	}{{"whole", Options{}}, {"kernels", Options{KernelsOnly: true}}} {
		b.Run(c.name, func(b *testing.B) { benchNsysRead(b, c.opt) })
	}
}

// benchNsysRead is BenchmarkNsysRead with the read's options: "whole" is
// what report and findings read, "kernels" what top reads.
func benchNsysRead(b *testing.B, opt Options) {
	mb := int64(100)
	if s := os.Getenv("TRACELENS_NSYS_BENCH_MB"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
			mb = n
		}
	}
	raw := sharedExport(b, "caoye310__Lower-Triangular-Solves__la.sqlite.gz")
	src := NsysSource{R: bytes.NewReader(raw), Size: int64(len(raw))}
	per, err := NsysEventBytes(src)
	if err != nil {
		b.Fatal(err)
	}
	src.Copies = int(max(1, mb<<20/per))
	p, st := writeExport(b, []NsysSource{src})
	fi, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t, err := ReadFile(p, opt)
		if err != nil {
			b.Fatal(err)
		}
		if t.Kernels() != st.Kernels {
			b.Fatalf("%d kernels, want %d", t.Kernels(), st.Kernels)
		}
	}
}

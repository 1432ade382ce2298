package export_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/export"
	"github.com/tracelens/tracelens/fixtures"
	"github.com/tracelens/tracelens/fixtures/cputime"
	"github.com/tracelens/tracelens/fixtures/genranks"
	"github.com/tracelens/tracelens/fixtures/synth"
)

// BenchmarkExport times a whole export of one generated trace (copies of
// the default fixture's steps with Python stacks, as `go run
// ./fixtures/gen` writes them): hashing, reading, analysis and writing
// every table, from a file as users run it. MB/s is over the input;
// out/in is the Parquet output's size as a fraction of it.
// `go test -bench Export/500MB ./export` is the 500 MB figure.
func BenchmarkExport(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int64
	}{{"50MB", 50 << 20}, {"500MB", 500 << 20}} {
		b.Run(size.name, func(b *testing.B) {
			path := generated(b, size.bytes)
			st, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			out := b.TempDir()
			ins := []export.Input{{Path: path, Run: "bench"}}
			b.SetBytes(st.Size())
			var o export.Outcome
			for b.Loop() {
				outs, err := export.Run(ins, export.Options{Dir: out, Force: true})
				if err != nil {
					b.Fatal(err)
				}
				if o = outs[0]; o.Status != export.Exported {
					b.Fatalf("%s: %v", o.Status, o.Err)
				}
			}
			b.ReportMetric(float64(o.OutputBytes)/float64(o.InputBytes), "out/in")
		})
	}
}

// generated writes a trace of about size bytes into a temporary file.
func generated(b *testing.B, size int64) string {
	b.Helper()
	raw, err := fixtures.Bytes(fixtures.Default)
	if err != nil {
		b.Fatal(err)
	}
	tmpl, err := synth.ParseGzip(raw)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "trace.json")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := tmpl.Write(f, size); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkExportRanks times the export of a generated 64-rank run (the
// real multirank_ddp ranks repeated to TRACELENS_BENCH_RANK_MB, default
// 10, MB of JSON per rank; rank 5 a host straggler), given as its
// directory the way users export a run: distributed.Load reads and
// matches the ranks once, then every rank's tables are written. MB/s is
// over the input; cpu-s/op the process's user+system CPU time per export;
// peak-RSS-MB the process's high-water mark; out/in the Parquet output's
// size as a fraction of the input. TRACELENS_BENCH_RANKS changes the
// number of ranks. Generated runs are cached in
// $TMPDIR/tracelens-genranks-*.
//
//	go test -run '^$' -bench ExportRanks -benchtime 3x ./export
func BenchmarkExportRanks(b *testing.B) {
	mb, ranks := 10, 64
	if v, err := strconv.Atoi(os.Getenv("TRACELENS_BENCH_RANK_MB")); err == nil && v > 0 {
		mb = v
	}
	if v, err := strconv.Atoi(os.Getenv("TRACELENS_BENCH_RANKS")); err == nil && v > 1 {
		ranks = v
	}
	b.Run(fmt.Sprintf("ranks=%d/%dMB", ranks, mb), func(b *testing.B) {
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("tracelens-genranks-%dx%dMB", ranks, mb))
		if _, err := os.Stat(filepath.Join(dir, "done")); err != nil {
			srcs, ok, err := genranks.ParseFirst("../fixtures/runs/multirank_ddp/*.json*")
			if err != nil || !ok {
				b.Fatalf("no source ranks: %v", err)
			}
			os.RemoveAll(dir)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			if _, err := genranks.Generate(dir, srcs, genranks.Options{Ranks: ranks, Size: int64(mb) << 20, Straggler: min(5, ranks-1), Delay: 8_000_000}); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "done"), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		ins, err := export.Inputs([]string{dir})
		if err != nil {
			b.Fatal(err)
		}
		var total int64
		for _, in := range ins {
			if in.Job == "" {
				b.Fatalf("%s is not exported as a rank of a job", in.Path)
			}
			st, err := os.Stat(in.Path)
			if err != nil {
				b.Fatal(err)
			}
			total += st.Size()
		}
		if len(ins) != ranks {
			b.Fatalf("%d inputs, want %d ranks", len(ins), ranks)
		}
		out := b.TempDir()
		b.SetBytes(total)
		debug.FreeOSMemory()
		os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // reset VmHWM (Linux)
		cpu0 := cputime.Used()
		var outBytes int64
		var collectives int64
		for b.Loop() {
			outs, err := export.Run(ins, export.Options{Dir: out, Force: true})
			if err != nil {
				b.Fatal(err)
			}
			outBytes, collectives = 0, 0
			for _, o := range outs {
				if o.Status != export.Exported {
					b.Fatalf("%s: %s: %v", o.Path, o.Status, o.Err)
				}
				outBytes += o.OutputBytes
				collectives += o.Rows[export.TableCollectives]
			}
		}
		if collectives == 0 {
			b.Fatal("no collectives exported")
		}
		b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MB")
		b.ReportMetric((cputime.Used()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
		b.ReportMetric(float64(outBytes)/float64(total), "out/in")
	})
}

// peakRSS is VmHWM from /proc/self/status, in bytes (0 off Linux).
func peakRSS() int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

package ingest

import (
	"bytes"
	"errors"
	"io"
	"runtime/debug"
	"strings"
	"testing"
	"unsafe"

	"compress/gzip"

	"github.com/tracelens/tracelens/trace"
)

// gzipBomb is a small .json.gz that expands to n kernel events (n a
// multiple of 100 000): one compressed member of 100 000 events repeated,
// which gzip readers concatenate. 31.6 M events make 13 MB of gzip and
// 3.5 GB of JSON.
func gzipBomb(t testing.TB, n int) []byte {
	const per = 100_000
	ev := `,{"ph":"X","cat":"kernel","name":"void k<float>()","pid":0,"tid":7,"ts":10.5,"dur":2,"args":{"correlation":1,"stream":7}}`
	member := func(s string) []byte {
		var b bytes.Buffer
		zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
		if err != nil {
			t.Fatal(err)
		}
		zw.Write([]byte(s))
		zw.Close()
		return b.Bytes()
	}
	var out bytes.Buffer
	out.Write(member(`{"traceEvents": [` + ev[1:]))
	out.Write(member(strings.Repeat(ev, per-1)))
	rep := member(strings.Repeat(ev, per))
	for i := 1; i < n/per; i++ {
		out.Write(rep)
	}
	out.Write(member(`]}`))
	return out.Bytes()
}

// TestMemoryBudgetStopsAGzipBomb: a few MB of gzip expanding to 31.6 M
// kernel events stops as soon as the model passes the budget, with an
// error that says how much the whole trace needs: 31.6 M records of
// GPUActivity's size, within the precision of an extrapolation.
func TestMemoryBudgetStopsAGzipBomb(t *testing.T) {
	const events = 31_600_000
	bomb := gzipBomb(t, events)
	if len(bomb) > 16<<20 {
		t.Fatalf("bomb is %d bytes, want a small file", len(bomb))
	}
	const budget = 64 << 20
	tr, err := Read(bytes.NewReader(bomb), "bomb", Options{MaxMemory: budget})
	var be *BudgetError
	if !errors.As(err, &be) {
		t.Fatalf("got %v (model %v), want a BudgetError", err, tr != nil)
	}
	need := float64(events) * float64(unsafe.Sizeof(trace.GPUActivity{}))
	if float64(be.Need) < 0.8*need || float64(be.Need) > 1.25*need {
		t.Errorf("need %d bytes, want about %.0f", be.Need, need)
	}
	if be.Events > 2_000_000 {
		t.Errorf("read %d events before stopping: the budget allows ~500 k", be.Events)
	}
	for _, want := range []string{"needs about 3.", "GB", "~31.", "M events", "budget of 64.0 MB"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}

	// Unknown size (a pipe): no estimate, still a clear stop.
	_, err = Read(struct{ io.Reader }{bytes.NewReader(bomb)}, "pipe", Options{MaxMemory: budget})
	if !errors.As(err, &be) || be.Need != 0 || !strings.Contains(err.Error(), "more memory than the budget of 64.0 MB") {
		t.Errorf("pipe: %v", err)
	}
}

func TestParseByteSize(t *testing.T) {
	for in, want := range map[string]int64{"512MB": 512 << 20, "8GB": 8 << 30, "2GiB": 2 << 30, "1.5G": 3 << 29, "1048576": 1 << 20, "64k": 64 << 10, " 3 T ": 3 << 40} {
		if got, err := ParseByteSize(in); err != nil || got != want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "GB", "-1GB", "0", "lots", "1e300GB", "NaN"} {
		if _, err := ParseByteSize(bad); err == nil {
			t.Errorf("ParseByteSize(%q) succeeded", bad)
		}
	}
}

// TestGCSettingsAreRestored: the soft memory limit and GC percent a read
// sets are the process's again when it returns, error or not.
func TestGCSettingsAreRestored(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(123))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(5 << 30))
	for _, in := range []string{`[` + goodEvent + `]`, `[{"ph":`} {
		Read(strings.NewReader(in), "gc", Options{GCLimit: 64 << 20})
		if got := debug.SetMemoryLimit(-1); got != 5<<30 {
			t.Errorf("%s: memory limit left at %d", in, got)
		}
		if got := debug.SetGCPercent(123); got != 123 {
			t.Errorf("%s: GC percent left at %d", in, got)
		}
	}
}

// TestBatchesInFlightStaySmall: about one batch per worker is in flight,
// so on many cores batches shrink to keep them a 32nd of the input
// together (16 workers held a fifth of a 513 MB trace in 4 MiB buffers,
// and the collector ran back to back); on few cores they stay 4 MiB.
func TestBatchesInFlightStaySmall(t *testing.T) {
	const size = 513 << 20
	if got := batchSize(size, 2); got != chunkSize {
		t.Errorf("2 workers: batches of %d bytes, want %d", got, chunkSize)
	}
	for _, workers := range []int{1, 2, 4, 8, 16, 64} {
		if got := batchSize(size, workers); int64(got)*int64(workers) > size/32 {
			t.Errorf("%d workers: batches of %d bytes hold %.1f%% of the input", workers, got, 100*float64(got)*float64(workers)/size)
		}
	}
	if got := batchSize(size, 1024); got != 256<<10 {
		t.Errorf("1024 workers: batches of %d bytes, want the 256 KiB floor", got)
	}
	if got := batchSize(0, 16); got != chunkSize {
		t.Errorf("unknown size: batches of %d bytes, want %d", got, chunkSize)
	}
}

package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMaxMemoryStopsAGzipBomb: a .json.gz of a few MB that expands to
// 31.6 M kernel events exits 2 under --max-memory, saying how much the
// trace needs and how to allow it, instead of dying out of memory.
func TestMaxMemoryStopsAGzipBomb(t *testing.T) {
	ev := `,{"ph":"X","cat":"kernel","name":"void k<float>()","pid":0,"tid":7,"ts":10.5,"dur":2,"args":{"correlation":1,"stream":7}}`
	member := func(s string) []byte {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		zw.Write([]byte(s))
		zw.Close()
		return b.Bytes()
	}
	var bomb bytes.Buffer
	bomb.Write(member(`{"traceEvents": [` + ev[1:] + strings.Repeat(ev, 99_999)))
	rep := member(strings.Repeat(ev, 100_000))
	for range 315 {
		bomb.Write(rep)
	}
	bomb.Write(member(`]}`))
	path := filepath.Join(t.TempDir(), "bomb.json.gz")
	if err := os.WriteFile(path, bomb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI(t, nil, "top", "--max-memory", "100MB", path)
	if code != 2 {
		t.Fatalf("exit %d, want 2: %s", code, stderr)
	}
	for _, want := range []string{"bomb.json.gz: the trace needs about 3.", "GB of memory", "~31.", "budget of 100.0 MB", "--max-memory"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
	_, stderr, code = runCLI(t, nil, "top", "--max-memory", "lots", path)
	if code != 2 || !strings.Contains(stderr, "want a size such as 512MB") {
		t.Errorf("bad --max-memory: exit %d, %q", code, stderr)
	}
}

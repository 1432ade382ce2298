package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// -o naming something other than a regular file (a FIFO here; /dev/null
// or /dev/stdout in use) is written through, not replaced: report and
// annotate write a temporary file and rename it into place, which over
// /dev/null run as root replaced the device with a file for every program
// on the machine.
func TestOutputToSpecialFileWritesThrough(t *testing.T) {
	naive := fixture("fusedlinear_naive.json.gz")
	for _, cmd := range [][]string{
		{"report", "--format", "md", "-o"},
		{"annotate", "-o"},
	} {
		fifo := filepath.Join(t.TempDir(), "out")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skipf("no FIFO: %v", err)
		}
		got := make(chan string, 1)
		go func() {
			f, err := os.Open(fifo)
			if err != nil {
				got <- err.Error()
				return
			}
			defer f.Close()
			b, _ := io.ReadAll(f)
			got <- string(b)
		}()
		args := append(append([]string(nil), cmd...), fifo, naive)
		if _, stderr, code := runCLI(t, nil, args...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		// Checked first: a FIFO renamed over leaves its reader blocked.
		if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
			t.Fatalf("%v: %s is no longer a FIFO (%v)", args, fifo, err)
		}
		if out := <-got; !strings.Contains(out, "custom-gemm") {
			t.Errorf("%v: the FIFO's reader got %.300q", args, out)
		}
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTraceTextNeverReachesTheTerminalRaw gives every name in a real trace
// (kernels, ops, threads, the device) and the file name itself escape
// sequences, and checks that info, top and findings print none of them:
// the only control byte in their output is the newline they write.
func TestTraceTextNeverReachesTheTerminalRaw(t *testing.T) {
	raw := gunzipFixture(t, "fusedlinear_naive.json.gz")
	// OSC retitles the window, CSI 2J clears the screen, CR rewrites the
	// line, U+202E reverses it, U+009B is a one-byte CSI.
	hostile := `\u001b]0;pwned\u0007\u001b[2J\r\u202e\u009b31m`
	evil := strings.ReplaceAll(string(raw), `"name": "`, `"name": "`+hostile)
	evil = strings.Replace(evil, `"cat": "kernel"`, `"cat": "kernel\u001b[5m"`, 1)
	if evil == string(raw) {
		t.Fatal("fixture has no names to poison")
	}
	path := filepath.Join(t.TempDir(), "evil\x1b[31m.json")
	if err := os.WriteFile(path, []byte(evil), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"info", "top", "findings"} {
		out, stderr, code := runCLI(t, nil, cmd, path)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", cmd, code, stderr)
		}
		if !strings.Contains(out, "␛") {
			t.Errorf("%s: the escape is not shown as ␛ at all:\n%s", cmd, out)
		}
		for i, r := range out {
			if r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r < 0xa0 || r == '\u202e' {
				t.Fatalf("%s: control %U reaches the terminal at byte %d:\n%q", cmd, r, i, out)
			}
		}
	}
}

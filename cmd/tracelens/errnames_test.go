package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrorsSanitizeNames: a file name with an escape code and a newline
// reaches the error message shown, not acted on (issue 27): one line,
// no ESC byte, the name still recognisable.
func TestErrorsSanitizeNames(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "bad\x1b[31mname\n.json")
	if err := os.WriteFile(name, []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"info", name}, {"top", name}, {"findings", name}, {"info", name + ".missing"}} {
		_, stderr, code := runIn(args...)
		if code != exitUsageOrBad || strings.ContainsRune(stderr, 0x1b) || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "bad␛[31mname␊.json") {
			t.Errorf("%v: exit %d, stderr %q: want 2, one line, the name's controls shown", args, code, stderr)
		}
	}
}

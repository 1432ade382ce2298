package ingest

import (
	"io/fs"
	"os"
	"strings"
)

// IsTraceName reports whether a file name is one tracelens reads when it
// lists a directory: *.json or *.json.gz (what tensorboard_trace_handler
// and the other profilers write) or an Nsight Systems export, *.sqlite
// or *.sqlite.gz.
func IsTraceName(name string) bool {
	for _, ext := range []string{".json", ".json.gz", ".sqlite", ".sqlite.gz"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// IsTraceEntry is the one rule every command applies to the entries of a
// directory it reads: d, found at path, is a trace file when its name is
// a trace name (IsTraceName) and it is a regular file, itself or through
// symlinks (a symlink loop or a dangling link is not). FIFOs, sockets and
// devices are never traces, whatever their names: opening a FIFO blocks
// until a writer comes, and a device may never end.
func IsTraceEntry(path string, d fs.DirEntry) bool {
	if !IsTraceName(d.Name()) {
		return false
	}
	if d.Type().IsRegular() {
		return true
	}
	return d.Type()&fs.ModeSymlink != 0 && IsRegularFile(path)
}

// IsRegularFile reports whether path is a regular file, following
// symlinks: the files a pattern matches are read only when they are.
func IsRegularFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

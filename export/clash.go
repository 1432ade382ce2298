package export

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"
)

// ClashError says that the output directory already holds a run of the
// same name exported from another file with other content: exporting the
// input would silently replace that run's tables (day one's rank0 by day
// two's). Options.Force replaces it.
type ClashError struct {
	// Input is the file being exported, Run its run name.
	Input, Run string
	// Source and ContentHash are what the existing run was exported from.
	Source, ContentHash string
	// Dir is the output directory.
	Dir string
}

func (c *ClashError) Error() string {
	return fmt.Sprintf("%s: %s already holds run %q exported from %s (%s, other content); exporting %s would replace it: "+
		"export it to another -o directory, rename the file, or pass --force to replace the run",
		c.Input, c.Dir, c.Run, c.Source, c.ContentHash, c.Input)
}

// clash returns a *ClashError when dir holds in.Run's runs table for a
// different source with a different content hash than hash. The same
// content is never a clash (it is up to date, or exported again), nor is
// the same source: a trace captured again at the same path replaces its
// old tables, as resuming and re-exporting need. Sources are the same
// when their paths are equal or name the same file (relative paths are
// resolved from the working directory). A runs table that cannot be read
// is no evidence of a clash.
func clash(dir string, in Input, hash string) error {
	rows, err := parquet.ReadFile[RunRow](tablePath(dir, TableRuns, in.Run))
	if err != nil || len(rows) == 0 {
		return nil
	}
	prev := rows[0]
	if prev.ContentHash == hash || sameSource(prev.Source, in.source()) {
		return nil
	}
	return &ClashError{Input: in.source(), Run: in.Run, Source: prev.Source, ContentHash: prev.ContentHash, Dir: dir}
}

// sameSource reports whether two input paths name the same file.
func sameSource(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

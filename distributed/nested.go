package distributed

import (
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/tracelens/tracelens/ingest"
)

// nestedDepth is how deep below a run directory nestedTraceFiles looks:
// enough for the layouts profilers write (rank0/trace.json,
// worker0/plugins/profile/DATE/host.trace.json.gz).
const nestedDepth = 4

// nestedTraceFiles finds the trace files under dir's subdirectories, for
// a run directory that holds its ranks one directory each (issue 27).
// filepath.WalkDir does not enter symlinked directories, so a link loop
// cannot make it walk forever; symlinked files are taken as Files takes
// them (ingest.IsTraceEntry: regular files only, loops refused). Hidden
// directories (.ipynb_checkpoints, .git) are skipped.
func nestedTraceFiles(dir string) ([]string, error) {
	var files []string
	root := strings.Count(filepath.Clean(dir), string(filepath.Separator))
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil // an unreadable subdirectory holds no rank we can read
		}
		if d.IsDir() {
			if p != dir && (strings.HasPrefix(d.Name(), ".") || strings.Count(p, string(filepath.Separator))-root > nestedDepth) {
				return filepath.SkipDir
			}
			return nil
		}
		if ingest.IsTraceEntry(p, d) {
			files = append(files, p)
		}
		return nil
	})
	return files, err
}

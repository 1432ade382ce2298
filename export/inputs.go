package export

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/distributed"
	"github.com/tracelens/tracelens/ingest"
)

// Input is one trace file to export and the name its run gets: the name
// of its file in every table directory and the value of every row's run
// column.
type Input struct {
	Path string
	Run  string
	// InDir is true for a file found in a directory argument rather than
	// named itself: such a file that is valid JSON but not a trace (a
	// metadata file beside the traces) is passed over, not an error.
	InDir bool
	// Source, when set, is what the user named the trace when Path is a
	// copy of it ("-" for standard input, "embedded:NAME"): the runs
	// table's source and the messages show it.
	Source string
	// Job, when set, names the multi-rank run the file is one rank of:
	// Run exports the inputs of one job together, matching their
	// collectives across ranks (package distributed) for the collectives
	// table and the rank columns.
	Job string
}

// source is the trace's name for the runs table and messages.
func (in Input) source() string {
	if in.Source != "" {
		return in.Source
	}
	return in.Path
}

// Inputs expands command-line arguments into inputs. A file is one input
// named after its base name without trace extensions ("rank0" for
// rank0.pt.trace.json.gz); a directory contributes every trace file under
// it, named by the directory's base name and the path inside it
// ("nightly__2026-11-01__rank0"), so runs from different directories do
// not collide. Two inputs with the same name are an error naming both.
func Inputs(args []string) ([]Input, error) {
	var ins []Input
	for _, arg := range args {
		st, err := os.Stat(arg)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			ins = append(ins, Input{Path: arg, Run: runName(filepath.Base(arg))})
			continue
		}
		base := filepath.Base(filepath.Clean(arg))
		var found []Input
		err = filepath.WalkDir(arg, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			// The rule every command applies: regular files (also
			// through symlinks) with trace names; a FIFO named *.json
			// would block the export forever.
			if d.IsDir() || !ingest.IsTraceEntry(path, d) {
				return nil
			}
			rel, err := filepath.Rel(arg, path)
			if err != nil {
				return err
			}
			found = append(found, Input{Path: path, Run: runName(base + "/" + filepath.ToSlash(rel)), InDir: true})
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no trace files (*.json, *.json.gz, *.sqlite, *.sqlite.gz) in directory", arg)
		}
		markJobs(arg, base, found)
		ins = append(ins, found...)
	}
	seen := map[string]string{}
	for _, in := range ins {
		if prev, ok := seen[in.Run]; ok {
			return nil, fmt.Errorf("%s and %s would both be exported as run %q: export them to different directories", prev, in.Path, in.Run)
		}
		seen[in.Run] = in.Path
	}
	return ins, nil
}

// markJobs sets Job on the files found under the directory arg whose
// directory holds the ranks of a multi-rank run: two or more trace files,
// each with a distributedInfo object or a rank number in its name
// (distributed.IsRun, the rule `tracelens report` applies to a list of
// files). The job is named like a run, after the directory.
func markJobs(arg, base string, found []Input) {
	byDir := map[string][]int{}
	var dirs []string
	for i, in := range found {
		d := filepath.Dir(in.Path)
		if byDir[d] == nil {
			dirs = append(dirs, d)
		}
		byDir[d] = append(byDir[d], i)
	}
	for _, d := range dirs {
		idx := byDir[d]
		if len(idx) < 2 {
			continue
		}
		paths := make([]string, len(idx))
		for k, i := range idx {
			paths[k] = found[i].Path
		}
		if !distributed.IsRun(paths) {
			continue
		}
		rel, err := filepath.Rel(arg, d)
		if err != nil {
			continue
		}
		job := runName(base + "/" + filepath.ToSlash(rel))
		for _, i := range idx {
			found[i].Job = job
		}
	}
}

// IsTraceFile reports whether a file name looks like a Chrome-JSON trace
// (ingest.IsTraceName).
func IsTraceFile(name string) bool { return ingest.IsTraceName(name) }

// runName turns a trace's path into a run name: trace extensions cut,
// directories joined by "__", and anything but letters, digits, '.', '-'
// and '_' replaced by '_', so the name is a safe file name on every system
// and in every engine's path syntax.
func runName(path string) string {
	for _, ext := range []string{".gz", ".json", ".trace", ".pt"} {
		path = strings.TrimSuffix(path, ext)
	}
	parts := strings.Split(path, "/")
	parts = slices.DeleteFunc(parts, func(s string) bool { return s == "" || s == "." })
	name := []byte(strings.Join(parts, "__"))
	for i, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			name[i] = '_'
		}
	}
	if len(name) == 0 || name[0] == '.' {
		name = append([]byte("run_"), name...)
	}
	return string(name)
}

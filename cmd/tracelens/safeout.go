package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tracelens/tracelens/distributed"
	"github.com/tracelens/tracelens/termtext"
)

// refuseOutputOverInput returns an error (exit 2) when the output path out
// is one of the input files: the same path, or the same file reached
// through a symlink or a hard link (os.SameFile compares device and
// inode). Writing the output there would destroy the input. A directory
// or pattern among inputs names a run: its trace files are checked. An
// output that does not exist yet cannot be an input.
func refuseOutputOverInput(out string, inputs []string) error {
	if out == "" {
		return nil
	}
	ost, err := os.Stat(out)
	if err != nil {
		return nil
	}
	files := inputs
	if distributed.IsRun(inputs) {
		if fs, err := distributed.Files(inputs); err == nil {
			files = append(append([]string(nil), inputs...), fs...)
		}
	}
	for _, in := range files {
		ist, err := os.Stat(in)
		if err != nil || !os.SameFile(ost, ist) {
			continue
		}
		how := "is"
		if filepath.Clean(in) != filepath.Clean(out) {
			how = "is the same file as"
		}
		return fmt.Errorf("refusing to write the output %s: it %s the input %s, which writing would destroy; pick another -o",
			termtext.Sanitize(out), how, termtext.Sanitize(in))
	}
	return nil
}

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

// outputFile is where a command writes its -o file: a temporary file
// beside it, renamed into place by commit, so a failed run never leaves
// half a file behind. An existing path that is not a regular file (a
// device such as /dev/null or /dev/stdout, a FIFO) is written directly:
// renaming over it would replace the device with a file (as root, for
// every program on the machine).
type outputFile struct {
	*os.File
	path string
	tmp  bool
}

// createOutput opens the output for path (see outputFile).
func createOutput(path string) (*outputFile, error) {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return nil, err
		}
		return &outputFile{File: f, path: path}, nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tracelens-out-*")
	if err != nil {
		return nil, err
	}
	return &outputFile{File: f, path: path, tmp: true}, nil
}

// commit closes the output and puts it in place; after a failure (err
// not nil) it removes the temporary file instead and returns err.
func (o *outputFile) commit(err error) error {
	if o.tmp && err == nil {
		err = o.Chmod(0o644)
	}
	if cerr := o.Close(); err == nil {
		err = cerr
	}
	if !o.tmp {
		return err
	}
	if err == nil {
		err = os.Rename(o.Name(), o.path)
	}
	if err != nil {
		os.Remove(o.Name())
	}
	return err
}

// writeOutput writes data to path through createOutput and commit.
func writeOutput(path string, data []byte) error {
	o, err := createOutput(path)
	if err != nil {
		return err
	}
	_, err = o.Write(data)
	return o.commit(err)
}

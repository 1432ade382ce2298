package main

import (
	"io"
	"os"
)

// outWriter is the standard output every command writes through: it
// records the first write error (a full disk, a closed pipe, /dev/full),
// so that runMain turns it into exit 2 even where a command prints with
// fmt.Fprintf and never looks at the error. After an error it writes
// nothing more.
type outWriter struct {
	w   io.Writer
	err error
}

func (o *outWriter) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	o.err = err
	return n, err
}

// stdoutFile returns the file behind the command's standard output, if
// it is one (the terminal UI needs it).
func stdoutFile(e *env) (*os.File, bool) {
	w := e.stdout
	if o, ok := w.(*outWriter); ok {
		w = o.w
	}
	f, ok := w.(*os.File)
	return f, ok
}

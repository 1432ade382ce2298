package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

// startCPUProfile writes a CPU profile of the whole command to the file
// $TRACELENS_CPUPROFILE names, for `go tool pprof`: where a slow command
// on a real trace spends its time, on a machine with the binary but no Go
// toolchain. It returns the function that stops and closes it; a file
// that cannot be written is said on w and the command runs unprofiled.
func startCPUProfile(w io.Writer) (stop func()) {
	path := os.Getenv("TRACELENS_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(w, "tracelens: TRACELENS_CPUPROFILE: %v (running without the profile)\n", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(w, "tracelens: TRACELENS_CPUPROFILE: %v\n", err)
		}
	}
}

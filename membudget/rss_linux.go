package membudget

import (
	"bytes"
	"os"
	"strconv"
)

// residentBytes is the process's resident set size from
// /proc/self/statm (its second field, in pages): what the kernel and
// /usr/bin/time count, the binary's pages and thread stacks included.
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return heapEstimate()
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return heapEstimate()
	}
	pages, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		return heapEstimate()
	}
	return pages * int64(os.Getpagesize())
}

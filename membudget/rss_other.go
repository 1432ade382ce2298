//go:build !linux

package membudget

// residentBytes estimates the resident size from the Go runtime's
// accounts where /proc is not there.
func residentBytes() int64 { return heapEstimate() }

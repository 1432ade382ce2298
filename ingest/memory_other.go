//go:build !linux

package ingest

// physicalMemory is unknown off Linux: DefaultMaxMemory falls back to a
// fixed budget.
func physicalMemory() int64 { return 0 }

// adviseHugePages does nothing off Linux.
func adviseHugePages([]byte) {}

// prefault does nothing off Linux: pages are faulted in when written.
func prefault([]byte) {}

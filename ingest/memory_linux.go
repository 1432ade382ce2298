package ingest

import (
	"syscall"
	"unsafe"
)

// physicalMemory is the machine's RAM in bytes (0 if unknown).
func physicalMemory() int64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}

// adviseHugePages asks the kernel to back the 2 MiB-aligned interior of
// b with huge pages (a hint: without transparent huge pages it does
// nothing). A model slice of 100+ MB is otherwise first touched 4 KiB at
// a time, one page fault each.
func adviseHugePages(b []byte) {
	const huge = 2 << 20
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (start + huge - 1) &^ (huge - 1)
	hi := (start + uintptr(len(b))) &^ (huge - 1)
	if hi <= lo {
		return
	}
	_ = syscall.Madvise(b[lo-start:hi-start], syscall.MADV_HUGEPAGE)
}

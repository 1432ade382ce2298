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

// prefault has the kernel fault b's pages in writable, 2 MiB at a time
// from the front, so that whoever writes b next, front to back, finds
// them mapped. It stops at the first error: MADV_POPULATE_WRITE needs
// Linux 5.14, and without it the pages are faulted in when written, as
// usual. It never changes b's contents.
func prefault(b []byte) {
	const populateWrite = 23 // MADV_POPULATE_WRITE, not in package syscall
	// madvise wants a page-aligned start; the partial page before it is
	// faulted in by its writer.
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if skip := int((start+4095)&^4095 - start); skip < len(b) {
		b = b[skip:]
	} else {
		return
	}
	for len(b) > 0 {
		n := min(len(b), 2<<20)
		if syscall.Madvise(b[:n], populateWrite) != nil {
			return
		}
		b = b[n:]
	}
}

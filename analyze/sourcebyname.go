package analyze

import (
	"strings"
	"unsafe"

	"github.com/tracelens/tracelens/trace"
)

// sourceByName classifies names into ledger sources, each distinct name
// once: names repeat (every call of one op or function).
type sourceByName struct {
	classify func(string) ledgerSource
	seen     map[*byte]namedSource
	// recent caches the last name met in each of its slots (by address),
	// in front of seen: a trace's hundreds of names mostly stay there, and
	// a slot is read without hashing (the map lookup was a third of the
	// ledger index's filing on one core).
	recent [1024]recentSource
}

// recentSource is a slot of sourceByName.recent: a name's address, length
// and source.
type recentSource struct {
	p   *byte
	n   int
	src ledgerSource
}

// namedSource is a name's length and source, kept by the address of its
// bytes: the reader interns each name, so the calls of one op or function
// share one copy (one per reading worker), and a lookup by address takes
// the map's 8-byte path instead of hashing and comparing the name (a
// frame's is a path, a line and a function). The same address and length
// are the same bytes, so the same name; equal names at two addresses are
// classified alike, twice.
type namedSource struct {
	n   int
	src ledgerSource
}

// of is name's source.
func (c *sourceByName) of(name string) ledgerSource {
	p := unsafe.StringData(name)
	a := uintptr(unsafe.Pointer(p))
	slot := &c.recent[(a^a>>10^a>>20)&1023]
	if slot.p == p && slot.n == len(name) && p != nil {
		return slot.src
	}
	if e, ok := c.seen[p]; ok && e.n == len(name) {
		*slot = recentSource{p, len(name), e.src}
		return e.src
	}
	if c.seen == nil {
		c.seen = map[*byte]namedSource{}
	}
	src := c.classify(name)
	c.seen[p] = namedSource{len(name), src}
	*slot = recentSource{p, len(name), src}
	return src
}

// frameSource is the ledger source a Python frame counts towards: the
// profiler's own code, data loading (DataLoader, the user's data-named
// functions) or framework host work.
func frameSource(name string) ledgerSource {
	file, _, fn, ok := trace.ParseFrameName(name)
	switch {
	case ok && strings.Contains(file, "torch/profiler/") || strings.Contains(file, "torch/autograd/profiler"):
		return srcProfiler
	case ok && (libraryCause(file) == CauseDataLoading || !libraryFile(file) && dataName(fn)):
		return srcData
	}
	return srcFramework
}

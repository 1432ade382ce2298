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
	if e, ok := c.seen[p]; ok && e.n == len(name) {
		return e.src
	}
	if c.seen == nil {
		c.seen = map[*byte]namedSource{}
	}
	src := c.classify(name)
	c.seen[p] = namedSource{len(name), src}
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

package analyze

import (
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// sourceByName classifies names into ledger sources, each distinct name
// once (nameCache): names repeat (every call of one op or function).
type sourceByName struct {
	classify func(string) ledgerSource
	seen     nameCache[ledgerSource]
}

// of is name's source.
func (c *sourceByName) of(name string) ledgerSource { return c.seen.get(name, c.classify) }

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

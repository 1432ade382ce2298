package analyze

import (
	"sort"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// dispatcherName is hookDispatcher of a frame named name, the answer a
// nameCache remembers: a module's call path is the same few frames
// (module.py's _wrapped_call_impl, _call_impl and inner at one line
// each), the parent of most frames of a deep stack, and parsing their
// names again for every child was most of hook-overhead's walk.
func dispatcherName(name string) bool {
	return hookDispatcher(&trace.PyFrame{Span: trace.Span{Name: name}})
}

// hookKeyName is hookKey of a frame named name (a dispatcher's callees are
// a few functions called again and again).
func hookKeyName(name string) string { return hookKey(&trace.PyFrame{Span: trace.Span{Name: name}}) }

// gallopStarts returns the first i in [from, end) with starts[i] >= at,
// or end, where no op before from qualifies.
func gallopStarts(starts []trace.Time, end int, at trace.Time, from int) int {
	lo, hi, step := from, from, 1
	for hi < end && starts[hi] < at {
		lo, hi, step = hi+1, hi+step, step*2
	}
	hi = min(hi, end)
	return lo + sort.Search(hi-lo, func(j int) bool { return starts[lo+j] >= at })
}

// dispatcherOf is hookDispatcher(f) remembered in m. The suffix test that
// rules out nearly every frame of a deep stack runs before the memo: it
// is cheaper than a slot's compare.
func dispatcherOf(m *nameCache[bool], f *trace.PyFrame) bool {
	n := f.Name
	if !strings.HasSuffix(n, "inner") && !strings.HasSuffix(n, "_call_impl") {
		return false
	}
	return m.get(n, dispatcherName)
}

package analyze

import (
	"slices"

	"github.com/tracelens/tracelens/trace"
)

// categoryID returns the id (CategoryFacts.cat) of category name, or -1
// when no activity has it: a loop over every kernel compares ids, not the
// names they stand for.
func (c *CategoryFacts) categoryID(name string) int {
	for i, n := range c.catNames {
		if n == name {
			return i
		}
	}
	return -1
}

// launchCountsOf is launchCounts with the launch calls the Launches fact
// found (l.launch): no name tests over every API call.
func launchCountsOf(t *trace.Trace, l *LaunchFacts) map[trace.Index][]trace.Time {
	m := map[trace.Index][]trace.Time{}
	for i := range t.APICalls {
		if l.launch[i] {
			c := &t.APICalls[i]
			m[c.Thread] = append(m[c.Thread], c.Start)
		}
	}
	for _, v := range m {
		slices.Sort(v)
	}
	return m
}

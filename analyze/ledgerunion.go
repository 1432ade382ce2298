package analyze

import (
	"slices"

	"github.com/tracelens/tracelens/interval"
)

// joinScans adds the parts' runs to li's unions, each family's parts
// joined in order, then the families merged; and cuts the long
// intervals met into li.long.
func (li *ledgerIndex) joinScans(scans []hostScan) {
	runs := make([]*hostRuns, len(scans))
	for src := srcSync; src < nSources; src++ {
		union := li.union[src]
		for f := range nFamilies {
			for k := range scans {
				runs[k] = &scans[k].fam[f]
			}
			union = unionSorted(union, joinRuns(runs, src))
		}
		li.union[src] = union
	}
	for k := range scans {
		for _, p := range scans[k].long {
			li.fileLong(p.src, p.b)
		}
	}
}

// joinRuns returns the union of the runs' intervals of source src (the
// runs are one family's parts, in order): the parts' own intervals when
// one part holds them all in order, else them appended in order, merged
// as they come, and sorted only when a part or the join was out of
// order.
func joinRuns(runs []*hostRuns, src ledgerSource) []interval.Bounds {
	var only *hostRuns
	n := 0
	for _, r := range runs {
		if len(r.spans[src]) > 0 {
			only = r
			n++
		}
	}
	switch {
	case n == 0:
		return nil
	case n == 1 && !only.unsorted[src]:
		return only.spans[src]
	}
	var all hostRuns
	for _, r := range runs {
		all.unsorted[src] = all.unsorted[src] || r.unsorted[src]
		for _, b := range r.spans[src] {
			all.add(src, b)
		}
	}
	if all.unsorted[src] {
		return interval.UnionBounds(all.spans[src])
	}
	return all.spans[src]
}

// unionSorted returns the union of a and b, each sorted and disjoint
// (touching intervals merged), in one merge: a itself when b is empty
// and b when a is.
func unionSorted(a, b []interval.Bounds) []interval.Bounds {
	switch {
	case len(b) == 0:
		return a
	case len(a) == 0:
		return b
	}
	out := make([]interval.Bounds, 0, len(a)+len(b))
	for i, j := 0, 0; i < len(a) || j < len(b); {
		var s interval.Bounds
		if j == len(b) || i < len(a) && a[i].Start <= b[j].Start {
			s, i = a[i], i+1
		} else {
			s, j = b[j], j+1
		}
		if n := len(out); n > 0 && s.Start <= out[n-1].End {
			out[n-1].End = max(out[n-1].End, s.End)
			continue
		}
		out = append(out, s)
	}
	return out
}

// fileLong files interval b of source src, which encloses a window and
// whose source does not keep such intervals, under each window with a
// length it overlaps without enclosing it: the part inside.
func (li *ledgerIndex) fileLong(src ledgerSource, b interval.Bounds) {
	hi, _ := slices.BinarySearch(li.starts, b.End)
	// The windows starting before b ends, walked back while one of them
	// can still reach past its start.
	for i := hi - 1; i >= 0 && li.reach[i] > b.Start; i-- {
		wi := li.order[i]
		w := li.win[wi]
		if w.End <= w.Start || b.Start >= w.End || b.End <= w.Start || b.Start <= w.Start && b.End >= w.End {
			continue
		}
		if li.long == nil {
			li.long = make([]*[nSources][]interval.Bounds, len(li.win))
		}
		if li.long[wi] == nil {
			li.long[wi] = new([nSources][]interval.Bounds)
		}
		li.long[wi][src] = append(li.long[wi][src], interval.Bounds{Start: max(b.Start, w.Start), End: min(b.End, w.End)})
	}
}

// hostIn returns host source src's intervals that overlap window i
// (less those enclosing it when src does not keep them), sorted and
// disjoint: a part of li's union, not a copy, unless long intervals
// have parts in the window; then the union of both, clipped, in sc.host.
func (li *ledgerIndex) hostIn(i int, src ledgerSource, sc *ledgerScratch) []interval.Bounds {
	w := li.win[i]
	if li.long == nil || li.long[i] == nil || len(li.long[i][src]) == 0 {
		return inWindow(li.union[src], w, &sc.at[src])
	}
	h := appendInWindow(sc.host[src][:0], li.union[src], w)
	sc.host[src] = interval.UnionBounds(append(h, li.long[i][src]...))
	return sc.host[src]
}

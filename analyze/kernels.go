package analyze

import (
	"cmp"
	"slices"
	"sync"

	"github.com/tracelens/tracelens/trace"
)

// KernelStat summarises every launch of one kernel name.
type KernelStat struct {
	Name   string
	Count  int
	Total  trace.Duration
	Mean   trace.Duration
	Median trace.Duration
	P95    trace.Duration
	Min    trace.Duration
	Max    trace.Duration
	// Share is Total over all kernels' total time.
	Share float64
	// Launches indexes the kernel's GPU activities in start order.
	Launches []trace.Index
	// Autotune is true for the launches torch.compile's autotuner or
	// compiler made (see AutotuneLaunches): a row of their own, ranked
	// after the workload's kernels.
	Autotune bool
}

// KernelTable returns one row per distinct kernel name, sorted by total
// time descending (name ascending on ties, so output is deterministic), and
// the total kernel time. Launches made by torch.compile's autotuner get
// rows of their own (Autotune), after every workload row: they are not
// the steady state.
func KernelTable(t *trace.Trace) ([]KernelStat, trace.Duration) {
	return kernelTable(t, AutotuneLaunches(t))
}

// kernelTable is KernelTable with the autotune launches already marked
// (tune, nil for none): the analysis has them in its facts.
func kernelTable(t *trace.Trace, tune []bool) ([]KernelStat, trace.Duration) {
	// Two passes, so each row's launches are one exact slice of a single
	// array: appending grew them by copies that, on 3 M launches of one
	// kernel, allocated four times the final size.
	rows, rowOf, counts, all := kernelRows(t, tune)
	most := placeLaunches(rows, rowOf, counts)
	durs := make([]trace.Duration, 0, most)
	// rowOf is done with: the merged launches go there.
	m := launchMerger{out: rowOf[:0]}
	for r := range rows {
		row := &rows[r]
		durs = m.gather(t.GPU, row.Launches, durs[:0])
		// The durations sort while the launches merge, on another core
		// where there is one.
		var wg sync.WaitGroup
		wg.Go(func() { slices.Sort(durs) })
		m.merge(row.Launches)
		wg.Wait()
		row.Count = len(durs)
		for _, d := range durs {
			row.Total += d
		}
		row.Mean = row.Total / trace.Duration(row.Count)
		row.Median = Percentile(durs, 50)
		row.P95 = Percentile(durs, 95)
		row.Min, row.Max = durs[0], durs[len(durs)-1]
		if all > 0 {
			row.Share = float64(row.Total) / float64(all)
		}
	}
	slices.SortStableFunc(rows, func(a, b KernelStat) int {
		if a.Autotune != b.Autotune {
			if b.Autotune {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.Total, a.Total); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return rows, all
}

// kernelRows is KernelTable's first pass: a row per kernel name (and
// autotune mark), each GPU activity's row (-1: not a kernel), the rows'
// launch counts and the kernels' total time.
func kernelRows(t *trace.Trace, tune []bool) (rows []KernelStat, rowOf []int32, counts []int, all trace.Duration) {
	// A row per name, found by the name's address (the reader interns
	// names): hashing each launch's name was most of this pass where
	// kernels of several names alternate. One cache per autotune mark.
	var byName [2]nameCache[int32]
	rowOf = make([]int32, len(t.GPU))
	for i := range t.GPU {
		g := &t.GPU[i]
		if g.Kind != trace.Kernel {
			rowOf[i] = -1
			continue
		}
		autotune := tune != nil && tune[i]
		mark := 0
		if autotune {
			mark = 1
		}
		j := byName[mark].get(g.Name, func(name string) int32 {
			rows = append(rows, KernelStat{Name: name, Autotune: autotune})
			counts = append(counts, 0)
			return int32(len(rows) - 1)
		})
		rowOf[i] = j
		counts[j]++
		all += g.Dur()
	}
	return rows, rowOf, counts, all
}

// placeLaunches gives each row its launches, in GPU order, as one exact
// slice of a single array, and returns the most any row has.
func placeLaunches(rows []KernelStat, rowOf []int32, counts []int) int {
	total := 0
	for _, n := range counts {
		total += n
	}
	launches := make([]trace.Index, 0, total)
	most := 0
	for r, n := range counts {
		rows[r].Launches = launches[len(launches) : len(launches) : len(launches)+n]
		launches = launches[:len(launches)+n]
		most = max(most, n)
	}
	for i, j := range rowOf {
		if j >= 0 {
			rows[j].Launches = append(rows[j].Launches, trace.Index(i))
		}
	}
	return most
}

// Timing converts s to microseconds, as the JSON outputs report it.
func (s *KernelStat) Timing() KernelTiming {
	return KernelTiming{Name: s.Name, Autotune: s.Autotune, Count: s.Count, TotalUs: s.Total.Micros(), MeanUs: s.Mean.Micros(), MedianUs: s.Median.Micros(),
		P95Us: s.P95.Micros(), MinUs: s.Min.Micros(), MaxUs: s.Max.Micros(), Share: s.Share}
}

// Percentile returns the p-th percentile of sorted durations, interpolating
// linearly between closest ranks (numpy's default), so a median of two
// values is their midpoint.
func Percentile(sorted []trace.Duration, p float64) trace.Duration {
	if len(sorted) == 0 {
		return 0
	}
	pos := p / 100 * float64(len(sorted)-1)
	lo := int(pos)
	if lo >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	frac := pos - float64(lo)
	return sorted[lo] + trace.Duration(frac*float64(sorted[lo+1]-sorted[lo])+0.5)
}

// launchMerger sorts a kernel's launches by start. GPU activity is in
// (device, stream, start) order and a row's launches are ascending
// indexes, so they are a few runs already sorted by start, one per
// stream the kernel ran on: merging the runs (a heap of their heads)
// reads each launch's record once, in index order, where a comparison
// sort read two records at random per comparison (0.7 s of `top` on 3.2 M
// launches over 19 streams). Equal starts keep index order.
type launchMerger struct {
	starts []trace.Time  // the launches' starts, in index order
	runs   []int         // where each run starts in the launches, then their end
	heap   []runHead     // the runs not yet merged, by (start, index) of their head
	out    []trace.Index // the merged launches, copied back
}

// runHead is a run's next launch: its place in the launches, its start
// and the end of its run.
type runHead struct {
	start   trace.Time
	at, end int
}

func (h runHead) before(o runHead) bool {
	return h.start < o.start || h.start == o.start && h.at < o.at
}

// gather notes the starts of launches l (ascending indexes into gpu) and
// their runs, and appends their durations to durs (in index order): one
// pass over the records for both.
func (m *launchMerger) gather(gpu []trace.GPUActivity, l []trace.Index, durs []trace.Duration) []trace.Duration {
	m.starts = slices.Grow(m.starts[:0], len(l)) // at its size: no copies growing
	m.runs = append(m.runs[:0], 0)
	for i, x := range l {
		g := &gpu[x]
		if i > 0 && g.Start < m.starts[i-1] {
			m.runs = append(m.runs, i)
		}
		m.starts = append(m.starts, g.Start)
		durs = append(durs, g.Dur())
	}
	m.runs = append(m.runs, len(l))
	return durs
}

// merge sorts l, whose starts and runs gather noted, by start.
func (m *launchMerger) merge(l []trace.Index) {
	if len(m.runs) <= 2 {
		return // one stream, or several one after another
	}
	m.heap = m.heap[:0]
	for r := 0; r+1 < len(m.runs); r++ {
		m.heap = append(m.heap, runHead{start: m.starts[m.runs[r]], at: m.runs[r], end: m.runs[r+1]})
	}
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	m.out = slices.Grow(m.out[:0], len(l))
	for len(m.heap) > 0 {
		h := &m.heap[0]
		m.out = append(m.out, l[h.at])
		if h.at++; h.at < h.end {
			h.start = m.starts[h.at]
		} else {
			m.heap[0] = m.heap[len(m.heap)-1]
			m.heap = m.heap[:len(m.heap)-1]
		}
		m.down(0)
	}
	copy(l, m.out)
}

// down restores the heap order below i.
func (m *launchMerger) down(i int) {
	h := m.heap
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h[c+1].before(h[c]) {
			c++
		}
		if !h[c].before(h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

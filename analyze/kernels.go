package analyze

import (
	"cmp"
	"slices"

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
	k := kernelRows(t, tune)
	durs, starts := k.place()
	rows := k.rows
	// rowOf is done with: the merged launches go there.
	m := launchMerger{out: k.rowOf[:0]}
	off := 0
	for r := range rows {
		row := &rows[r]
		n := len(row.Launches)
		d := durs[off : off+n]
		m.merge(row.Launches, starts[off:off+n])
		off += n
		row.Count = n
		for _, x := range d {
			row.Total += x
		}
		row.Mean = row.Total / trace.Duration(row.Count)
		row.Min, row.Max = slices.Min(d), slices.Max(d)
		// Two ranks each, selected: sorting every row's durations was
		// most of the table's time.
		p := percentiles(d, 50, 95)
		row.Median, row.P95 = p[0], p[1]
		if k.all > 0 {
			row.Share = float64(row.Total) / float64(k.all)
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
	return rows, k.all
}

// kernelLaunches is KernelTable's first pass: a row per kernel name (and
// autotune mark), each GPU activity's row (-1: not a kernel), duration
// and start, the rows' launch counts and the kernels' total time.
type kernelLaunches struct {
	rows   []KernelStat
	rowOf  []int32
	dur    []trace.Duration // by GPU index, kernels only
	start  []trace.Time     // by GPU index, kernels only
	counts []int
	all    trace.Duration
}

// kernelRows is KernelTable's first pass. It notes each kernel's
// duration and start by GPU index so that the rows' pass reads 16 bytes
// a launch in order, not the launch's whole record at random.
func kernelRows(t *trace.Trace, tune []bool) *kernelLaunches {
	// A row per name, found by the name's address (the reader interns
	// names): hashing each launch's name was most of this pass where
	// kernels of several names alternate. One cache per autotune mark.
	var byName [2]nameCache[int32]
	k := &kernelLaunches{rowOf: make([]int32, len(t.GPU)), dur: make([]trace.Duration, len(t.GPU)), start: make([]trace.Time, len(t.GPU))}
	for i := range t.GPU {
		g := &t.GPU[i]
		if g.Kind != trace.Kernel {
			k.rowOf[i] = -1
			continue
		}
		autotune := tune != nil && tune[i]
		mark := 0
		if autotune {
			mark = 1
		}
		j := byName[mark].get(g.Name, func(name string) int32 {
			k.rows = append(k.rows, KernelStat{Name: name, Autotune: autotune})
			k.counts = append(k.counts, 0)
			return int32(len(k.rows) - 1)
		})
		k.rowOf[i] = j
		k.counts[j]++
		d := g.Dur()
		k.dur[i], k.start[i] = d, g.Start
		k.all += d
	}
	return k
}

// place gives each row its launches, in GPU order, as one exact slice of
// a single array, and returns the launches' durations and starts laid
// out the same way: a row's are one slice of each.
func (k *kernelLaunches) place() (durs []trace.Duration, starts []trace.Time) {
	total := 0
	for _, n := range k.counts {
		total += n
	}
	launches := make([]trace.Index, total)
	durs, starts = make([]trace.Duration, total), make([]trace.Time, total)
	next := make([]int, len(k.rows)) // each row's next place
	off := 0
	for r, n := range k.counts {
		k.rows[r].Launches = launches[off : off+n : off+n]
		next[r] = off
		off += n
	}
	for i, j := range k.rowOf {
		if j >= 0 {
			at := next[j]
			next[j]++
			launches[at], durs[at], starts[at] = trace.Index(i), k.dur[i], k.start[i]
		}
	}
	return durs, starts
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
	starts []trace.Time  // the launches' starts, in index order (not its own)
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

// merge sorts l (ascending indexes into the GPU activity) by start,
// starts being their starts in the same order. GPU order makes them runs
// of ascending starts, one per stream: a heap merges the runs.
func (m *launchMerger) merge(l []trace.Index, starts []trace.Time) {
	m.starts = starts
	m.runs = append(m.runs[:0], 0)
	for i := 1; i < len(starts); i++ {
		if starts[i] < starts[i-1] {
			m.runs = append(m.runs, i)
		}
	}
	m.runs = append(m.runs, len(l))
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

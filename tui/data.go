package tui

import (
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/diff"
	"github.com/tracelens/tracelens/distributed"
	"github.com/tracelens/tracelens/trace"
)

// data is everything the screens show, computed once after loading.
type data struct {
	name string // the trace's file name, sanitised
	t    *trace.Trace
	res  *analyze.Result

	kernels []kernelRow
	// kernelIndex maps a full kernel name to its row in kernels.
	kernelIndex map[string]int

	tree opTree
	// lanes are the timeline's lanes of t, built beside the analysis
	// (they read only the trace); nil: the timeline builds them.
	lanes []lane
	// span is t's span (trace.Trace.Span, a walk of every event), found
	// with the lanes; valid where lanes are set.
	span trace.Span
	// diff compares a BASE trace with this one; nil for a single trace.
	diff *diff.Result
	// run is the multi-rank run this trace is rank run.Ranks[rank] of;
	// nil for a single trace.
	run  *distributed.Result
	rank int
}

// kernelRow is one distinct kernel: analyze's figures plus what the detail
// view needs.
type kernelRow struct {
	analyze.Kernel
	short, full string // sanitised for display
	key         string // lower-cased short and full name, for the filter
	launches    []trace.Index
}

// us turns analyze's float microseconds back into a printable duration.
func us(v float64) trace.Duration { return trace.Duration(math.Round(v * 1e3)) }

type analysis struct {
	res *analyze.Result
	err error
}

// analyzeFunc is the analysis the UI is given (Options.Analyze).
type analyzeFunc func(*trace.Trace, analyze.Config) (*analyze.Result, error)

// analyzeAsync runs the analysis on its own goroutine: it is most of the
// time between the end of ingest and the first frame, and the UI's own
// tables do not need it.
func analyzeAsync(t *trace.Trace, cfg analyze.Config, run analyzeFunc) <-chan analysis {
	ch := make(chan analysis, 1)
	go func() {
		res, err := run(t, cfg)
		if err != nil {
			err = fmt.Errorf("analysing %s: %w", t.Source, err)
		}
		ch <- analysis{res, err}
	}()
	return ch
}

// buildData analyses t with analyze.Run and precomputes every table (the
// tests' and benchmarks' way in). base, when not nil, is the BASE side of
// a diff.
func buildData(t *trace.Trace, base *trace.Trace) (*data, error) {
	return buildDataWith(t, base, analyze.Config{}, analyze.Run)
}

// buildDataWith is buildData analyzing t with run and cfg (a rank's peer
// waits), and base with run.
func buildDataWith(t *trace.Trace, base *trace.Trace, cfg analyze.Config, run analyzeFunc) (*data, error) {
	cur := analyzeAsync(t, cfg, run)
	var baseCh <-chan analysis
	if base != nil {
		baseCh = analyzeAsync(base, analyze.Config{}, run)
	}
	// The timeline's lanes (a walk of every event, a tenth of a second on
	// millions of Python frames) need only the trace: built beside the
	// analysis, not after it.
	type laneSet struct {
		lanes []lane
		span  trace.Span
	}
	lanesCh := make(chan laneSet, 1)
	go func() { lanesCh <- laneSet{buildLanes(t), t.Span()} }()
	opsCh := make(chan *placedOps, 1)
	go func() { opsCh <- placeOps(t) }()
	launches := map[string][]trace.Index{}
	for i := range t.GPU {
		if g := &t.GPU[i]; g.Kind == trace.Kernel {
			launches[g.Name] = append(launches[g.Name], trace.Index(i))
		}
	}
	a := <-cur
	var b analysis
	if baseCh != nil {
		b = <-baseCh
	}
	if a.err != nil {
		return nil, a.err
	}
	if b.err != nil {
		return nil, b.err
	}
	res := a.res
	// The screens read the trace analyze read (its steps derived where
	// the trace marks none) and its facts through the view. The op
	// tree's launches (its ops were placed beside the analysis) are hung
	// beside the kernel rows and the wait for the lanes.
	v := res.View()
	treeCh := make(chan opTree, 1)
	go func() { treeCh <- (<-opsCh).withGPU(v.Trace(), v.Op) }()
	d := &data{name: sanitize(filepath.Base(t.Source)), t: v.Trace(), res: res, kernelIndex: make(map[string]int, len(res.Kernels))}
	if ls := <-lanesCh; d.t == t {
		// (Where analyze derived the steps, its trace is another: the
		// step lane comes from that one, so the timeline builds them.)
		d.lanes, d.span = ls.lanes, ls.span
	}
	d.kernels = make([]kernelRow, len(res.Kernels))
	for i, k := range res.Kernels {
		short := k.ShortName
		if short == "" {
			short = analyze.ShortKernelName(k.Name)
		}
		r := &d.kernels[i]
		r.Kernel = k
		r.short, r.full = sanitize(short), sanitize(k.Name)
		r.key = strings.ToLower(r.short + "\x00" + r.full)
		r.launches = launches[k.Name]
		d.kernelIndex[k.Name] = i
	}
	if base != nil {
		var err error
		d.diff, err = diff.Compare(b.res, res, diff.Options{})
		if err != nil {
			return nil, fmt.Errorf("comparing %s with %s: %w", base.Source, t.Source, err)
		}
	}
	d.tree = <-treeCh
	return d, nil
}

// orderBy returns the permutation of n rows sorted by cmpRows, ties broken
// by row index so the order is deterministic.
func orderBy(n int, cmpRows func(a, b int) int) []int32 {
	ord := make([]int32, n)
	for i := range ord {
		ord[i] = int32(i)
	}
	slices.SortStableFunc(ord, func(a, b int32) int {
		if c := cmpRows(int(a), int(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return ord
}

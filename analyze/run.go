package analyze

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tracelens/tracelens/trace"
)

// Analyzer is one unit of analysis, in the manner of go/analysis: a
// finding analyzer detects one kind of performance problem (Run); a fact
// analyzer computes something several others read (Fact). Its Name is
// the id of the findings it returns (part of the JSON contract); Doc says
// in one paragraph what it detects or computes, how, and with which
// thresholds.
type Analyzer struct {
	Name string
	Doc  string
	// Requires lists the fact analyzers whose results this one reads
	// through its Pass (FactOf, or the typed accessor declared beside the
	// fact). Nothing else is visible, and never another analyzer's
	// findings: what two analyzers share is a fact (Validate).
	Requires []*Analyzer
	// Run reads the pass and returns findings; none is a valid answer.
	Run func(*Pass) ([]Finding, error)
	// Fact computes a fact analyzer's result; it reports no findings.
	Fact func(*Pass) (any, error)
	// NoMetrics marks a fact that reads no metric: its pass has no
	// Result, and it runs beside the metrics instead of after them (on 16
	// cores a 27 ms fact that fusion-candidate waits for had started only
	// once the metrics were done). It may require only facts the metrics
	// read (Facts) and other NoMetrics facts (Validate).
	NoMetrics bool
}

// Pass is what an analyzer reads: the trace, the metrics every analyzer
// shares, and the results of the analyzers it requires.
type Pass struct {
	// Analyzer is the analyzer this pass runs.
	Analyzer *Analyzer
	Trace    *trace.Trace
	// Result holds every metric; its Findings are not filled in until
	// every analyzer has run. The facts the metrics read (Facts) run
	// before the metrics and see none, NoMetrics facts beside them and
	// see none either; other facts run after them.
	Result *Result
	// resultOf holds the result of each fact in Analyzer.Requires (read
	// through FactOf).
	resultOf map[*Analyzer]any
	// ix is the view of the required facts the analyzers' code reads.
	ix *index
	// critical turns GPU-time savings into step time (finish); every
	// finding's pass shares the one computed from all facts.
	critical *criticalShares
}

// Config selects analyzers by name. An empty Enable means all of them;
// Disable removes names from that set.
type Config struct {
	Enable  []string
	Disable []string
	// PeerWait is, for one rank of a multi-rank run, the intervals (on
	// this trace's clock) its communication kernels spent waiting for the
	// last rank of their collective (distributed.Run.PeerWaits): the
	// ledger's peer_wait line. Nil for a lone trace.
	PeerWait []trace.Span
	// Budget, if set, is called between facts and between analyzers; an
	// error (the process is over its memory budget, --max-memory) stops
	// the analysis and is returned as is.
	Budget func() error
	// Stages, if set, receives a line per part of the analysis with its
	// wall time (each fact, the metrics, each finding analyzer, the
	// savings): for finding what makes an analysis slow.
	Stages io.Writer
}

// Run computes every fact and metric over t and runs the selected
// analyzers (and the facts they require). Its findings are ranked by
// saving, largest first (a one-time cost by that cost over the steps
// traced). It returns an error for an unknown analyzer name, an invalid
// analyzer graph (Validate) or when an analyzer fails.
func Run(t *trace.Trace, cfg Config) (*Result, error) {
	as, err := Select(cfg.Enable, cfg.Disable)
	if err != nil {
		return nil, err
	}
	return runWith(t, as, cfg)
}

// runAnalyzers is Run with the analyzers chosen.
func runAnalyzers(t *trace.Trace, as []*Analyzer) (*Result, error) { return runWith(t, as, Config{}) }

// runWith is runAnalyzers with cfg's peer-wait intervals, budget and
// stage clock (its selection is in as).
func runWith(t *trace.Trace, as []*Analyzer, cfg Config) (*Result, error) {
	budget := cfg.Budget
	clock := &stageClock{w: cfg.Stages, began: time.Now()}
	defer clock.start("total")()
	if err := Validate(as); err != nil {
		return nil, err
	}
	done := clock.start("steps from the trace")
	t, source, label := deriveSteps(t)
	done()
	results := map[*Analyzer]any{}
	// The metrics read every fact, so every fact runs (before them: the
	// facts see no Result).
	done = clock.start("facts")
	_, err := runGraph(t, Facts(), nil, results, nil, budget, clock)
	done()
	if err != nil {
		return nil, err
	}
	all := newIndex(t, results)
	all.peerWait = unionSpans(slices.Clone(cfg.PeerWait))
	all.clock = clock
	// The selected analyzers' facts that read no metric, the faces' view
	// and the critical shares run beside the metrics, which read only all
	// (built above): they share no table, and the findings' graph below
	// finds those facts done.
	var beside sync.WaitGroup
	var besideErr error
	if early := withoutMetrics(as); len(early) > 0 {
		beside.Go(func() { _, besideErr = runGraph(t, early, nil, results, nil, budget, clock) })
	}
	var view *View
	var critical *criticalShares
	beside.Go(func() {
		defer clock.start("view and critical shares")()
		view, critical = newView(t, all), newCriticalShares(all)
	})
	r := all.metrics()
	beside.Wait()
	if besideErr != nil {
		return nil, besideErr
	}
	r.Summary.StepSource, r.Summary.StepLabel = source, label
	r.view = view
	r.Analyzers = []string{}
	// Findings join the Result only after every analyzer ran: no pass
	// sees another analyzer's findings.
	done = clock.start("findings")
	found, err := runGraph(t, as, r, results, critical, budget, clock)
	done()
	if err != nil {
		return nil, err
	}
	r.Findings = found
	// Listed in the order selected, not run (the facts an analyzer
	// requires run before it).
	for _, a := range as {
		if a.Fact == nil {
			r.Analyzers = append(r.Analyzers, a.Name)
		}
	}
	slices.SortStableFunc(r.Findings, func(a, b Finding) int {
		if c := cmp.Compare(rankUs(&b, &r.StepStats), rankUs(&a, &r.StepStats)); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	defer clock.start("savings and invariants")()
	addProfilerCaveat(t, r)
	prof, _ := results[ProfilerClock].(*profilerClock)
	estimateProfilerCost(t, r, prof)
	combineSavings(r)
	enforceInvariants(r, len(t.GPU))
	untracedSavings(r)
	return r, nil
}

// newPass is a's pass: only the results of what a requires are visible.
func newPass(a *Analyzer, t *trace.Trace, r *Result, results map[*Analyzer]any) *Pass {
	of := make(map[*Analyzer]any, len(a.Requires))
	for _, req := range a.Requires {
		if v, ok := results[req]; ok {
			of[req] = v
		}
	}
	return &Pass{Analyzer: a, Trace: t, Result: r, resultOf: of, ix: newIndex(t, of)}
}

// runFact runs a fact analyzer, turning a panic (a bug, or a fact it
// reads without requiring it) into an error that names it.
func runFact(a *Analyzer, p *Pass) (v any, err error) {
	defer recoverAs(a, &err)
	v, err = a.Fact(p)
	if err != nil {
		return nil, fmt.Errorf("fact %s: %w", a.Name, err)
	}
	if _, ok := v.([]Finding); ok {
		return nil, fmt.Errorf("fact %s returns findings: a fact computes what analyzers share; findings come from an analyzer's Run", a.Name)
	}
	return v, nil
}

// runFindings runs a finding analyzer the same way.
func runFindings(a *Analyzer, p *Pass) (fs []Finding, err error) {
	defer recoverAs(a, &err)
	fs, err = a.Run(p)
	if err != nil {
		return nil, fmt.Errorf("analyzer %s: %w", a.Name, err)
	}
	return fs, nil
}

// recoverAs turns a panic in analyzer a into *err: one analyzer's bug on
// an unusual trace must not crash the tool.
func recoverAs(a *Analyzer, err *error) {
	if v := recover(); v != nil {
		*err = fmt.Errorf("analyzer %s failed (a bug; does it read a fact missing from its Requires?): %v", a.Name, v)
	}
}

// shareOfStep returns us over the steady-state step (0 when unknown),
// within [0, 1].
func (p *Pass) shareOfStep(us float64) float64 {
	return shareOf(us, p.Result.StepStats.SteadyWallUs)
}

// shareOf returns part over whole within [0, 1]; 0 when whole is not
// positive or either is not a number.
func shareOf(part, whole float64) float64 {
	if !(whole > 0) || !(part > 0) {
		return 0
	}
	return min(part/whole, 1)
}

// All returns every analyzer in the order they run and are listed.
func All() []*Analyzer {
	return []*Analyzer{
		FusionCandidate,
		HookOverhead,
		LaunchBound,
		HostBound,
		GPUIdle,
		CompileOverhead,
		CustomGEMM,
		SameWorkSlower,
		HostSync,
		PageableMemcpy,
		SmallMemcpy,
		TF32Disabled,
		FP64Compute,
		UnfusedAttention,
		AttentionBackend,
		LayoutConversion,
		AllocatorChurn,
		MemoryGrowth,
		MemoryFragmentation,
		InferencePhases,
		ColdStart,
		OptimizerStep,
		AMPCast,
		GEMMEpilogue,
		CompiledSlower,
	}
}

// Lookup returns the analyzer called name, or nil.
func Lookup(name string) *Analyzer {
	for _, a := range All() {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// Select returns the analyzers named in enable (all when enable is empty)
// minus those named in disable, in All's order. Unknown names are an error
// that lists the known ones.
func Select(enable, disable []string) ([]*Analyzer, error) {
	for _, n := range slices.Concat(enable, disable) {
		if Lookup(n) == nil {
			return nil, fmt.Errorf("unknown analyzer %q (known: %s)", n, strings.Join(Names(), ", "))
		}
	}
	var out []*Analyzer
	for _, a := range All() {
		if len(enable) > 0 && !slices.Contains(enable, a.Name) {
			continue
		}
		if slices.Contains(disable, a.Name) {
			continue
		}
		out = append(out, a)
	}
	return out, nil
}

// Names lists every analyzer's name in All's order.
func Names() []string {
	var names []string
	for _, a := range All() {
		names = append(names, a.Name)
	}
	return names
}

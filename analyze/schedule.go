package analyze

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/tracelens/tracelens/trace"
)

// maxAnalyzerWorkers bounds how many late facts and finding analyzers run
// at once: each holds its own transient tables, which the memory budget
// pays for.
const maxAnalyzerWorkers = 8

// schedule is one run of the late facts and finding analyzers over the
// metrics: what they share and what they return.
type schedule struct {
	t        *trace.Trace
	r        *Result
	critical *criticalShares
	clock    *stageClock
	// mu guards results (the facts run so far) and the budget check,
	// which adjusts the process's soft memory limit (read-modify-write).
	mu      sync.Mutex
	results map[*Analyzer]any
	budget  func() error
	failed  atomic.Bool
}

// runGraph runs analyzers as and the facts they require as a graph (the
// facts the metrics read, before them, with r nil; then the selected
// analyzers and the late facts they require): each starts once the facts it requires are done, at
// most maxAnalyzerWorkers (and the cores) at a time, so that independent
// facts and analyzers overlap (on a trace of thousands of steps they were
// a third of the analysis, run one after another). They only read the
// trace, the metrics and the facts. Findings come back in the analyzers'
// order whatever order they finished in; the first error in that order
// wins.
func runGraph(t *trace.Trace, as []*Analyzer, r *Result, results map[*Analyzer]any, critical *criticalShares, budget func() error, clock *stageClock) ([]Finding, error) {
	s := &schedule{t: t, r: r, critical: critical, clock: clock, results: results, budget: budget}
	nodes := order(as)
	done := make(map[*Analyzer]chan struct{}, len(nodes))
	for _, a := range nodes {
		done[a] = make(chan struct{})
	}
	out := make([][]Finding, len(nodes))
	errs := make([]error, len(nodes))
	slots := make(chan struct{}, min(runtime.GOMAXPROCS(0), maxAnalyzerWorkers))
	var wg sync.WaitGroup
	for i, a := range nodes {
		wg.Go(func() {
			defer close(done[a])
			for _, req := range a.Requires {
				<-done[req]
			}
			if s.failed.Load() {
				return // a fact it may need failed: the run ends with that error
			}
			slots <- struct{}{}
			defer func() { <-slots }()
			if a.Fact != nil {
				errs[i] = s.fact(a)
			} else {
				out[i], errs[i] = s.analyzer(a)
			}
			if errs[i] != nil {
				s.failed.Store(true)
			}
		})
	}
	wg.Wait()
	found := []Finding{}
	for i := range nodes {
		if errs[i] != nil {
			return nil, errs[i]
		}
		found = append(found, out[i]...)
	}
	return found, nil
}

// check runs the budget check, one at a time.
func (s *schedule) check() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return checkBudget(s.budget)
}

// pass is a's pass over the results so far.
func (s *schedule) pass(a *Analyzer) *Pass {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := newPass(a, s.t, s.r, s.results)
	p.critical = s.critical
	return p
}

// fact runs late fact a unless it ran already (a fact the metrics read),
// and adds its result.
func (s *schedule) fact(a *Analyzer) error {
	s.mu.Lock()
	_, ran := s.results[a]
	s.mu.Unlock()
	if ran {
		return nil
	}
	if err := s.check(); err != nil {
		return err
	}
	defer s.clock.start("fact " + a.Name)()
	v, err := runFact(a, s.pass(a))
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.results[a] = v
	s.mu.Unlock()
	return nil
}

// analyzer runs finding analyzer a in its own pass and finishes its
// findings (IDs, savings, ledger lines).
func (s *schedule) analyzer(a *Analyzer) ([]Finding, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	defer s.clock.start("analyzer " + a.Name)()
	p := s.pass(a)
	fs, err := runFindings(a, p)
	if err != nil {
		return nil, err
	}
	for i := range fs {
		if err := p.finish(&fs[i], a.Name); err != nil {
			return nil, fmt.Errorf("analyzer %s: %w", a.Name, err)
		}
	}
	return fs, nil
}

package analyze

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// Validate checks the graph of analyzers as and everything they require,
// before anything runs, so a mistake in declaring an analyzer is an error
// that names it rather than a wrong answer: every analyzer has a name, no
// two share one, each is either a fact (Fact) or a finding analyzer
// (Run), Requires holds no nil, no cycle, and only facts: an analyzer
// that builds on another's work requires that work as a fact, never its
// findings.
func Validate(as []*Analyzer) error {
	var errs []error
	byName := map[string]*Analyzer{}
	// state: 0 unseen, 1 on the path being visited, 2 done.
	state := map[*Analyzer]int{}
	var path []string
	var visit func(a *Analyzer)
	visit = func(a *Analyzer) {
		switch state[a] {
		case 1:
			errs = append(errs, fmt.Errorf("analyzer graph has a cycle: %s → %s", strings.Join(path, " → "), a.Name))
			return
		case 2:
			return
		}
		state[a] = 1
		path = append(path, a.Name)
		errs = append(errs, checkAnalyzer(a, byName)...)
		for i, req := range a.Requires {
			if req == nil {
				errs = append(errs, fmt.Errorf("analyzer %s: Requires[%d] is nil (an analyzer declared after its use, or a missing one)", a.Name, i))
				continue
			}
			if req.Fact == nil {
				errs = append(errs, fmt.Errorf("analyzer %s requires %s, which is not a fact: an analyzer reads facts, never another's findings (make what it shares a fact both require)", a.Name, req.Name))
			}
			visit(req)
		}
		path = path[:len(path)-1]
		state[a] = 2
	}
	for i, a := range as {
		if a == nil {
			errs = append(errs, fmt.Errorf("analyzer %d of %d is nil", i+1, len(as)))
			continue
		}
		if state[a] == 2 {
			errs = append(errs, fmt.Errorf("analyzer %s is listed twice", a.Name))
			continue
		}
		visit(a)
	}
	return errors.Join(errs...)
}

// checkAnalyzer checks a alone and that no other analyzer in byName
// (those seen so far) has its name.
func checkAnalyzer(a *Analyzer, byName map[string]*Analyzer) []error {
	var errs []error
	if a.Name == "" {
		errs = append(errs, errors.New("an analyzer has no Name"))
	} else if other, ok := byName[a.Name]; ok && other != a {
		errs = append(errs, fmt.Errorf("two analyzers are named %s", a.Name))
	}
	byName[a.Name] = a
	if a.NoMetrics && a.Fact == nil {
		errs = append(errs, fmt.Errorf("analyzer %s is marked NoMetrics, which only a fact can be", a.Name))
	}
	if a.NoMetrics {
		for _, req := range a.Requires {
			if req != nil && !req.NoMetrics && !slices.Contains(Facts(), req) {
				errs = append(errs, fmt.Errorf("fact %s is marked NoMetrics but requires %s, which runs after the metrics", a.Name, req.Name))
			}
		}
	}
	switch {
	case a.Fact != nil && a.Run != nil:
		errs = append(errs, fmt.Errorf("analyzer %s has both Fact and Run: a fact computes a result and reports no findings; a finding analyzer the reverse", a.Name))
	case a.Fact == nil && a.Run == nil:
		errs = append(errs, fmt.Errorf("analyzer %s has neither Fact nor Run", a.Name))
	}
	return errs
}

// withoutMetrics returns the facts as require, transitively, that read
// no metric (Analyzer.NoMetrics), each after its requirements.
func withoutMetrics(as []*Analyzer) []*Analyzer {
	var out []*Analyzer
	for _, a := range order(as) {
		if a.Fact != nil && a.NoMetrics {
			out = append(out, a)
		}
	}
	return out
}

// order returns as and everything they require, transitively, each after
// its requirements; otherwise in as's order. The graph must be valid
// (Validate): on a cycle, order stops at the analyzer it revisits.
func order(as []*Analyzer) []*Analyzer {
	var out []*Analyzer
	seen := map[*Analyzer]bool{}
	var visit func(a *Analyzer)
	visit = func(a *Analyzer) {
		if seen[a] {
			return
		}
		seen[a] = true
		for _, req := range a.Requires {
			visit(req)
		}
		out = append(out, a)
	}
	for _, a := range as {
		visit(a)
	}
	return out
}

// FactOf returns the result of fact analyzer f as a T: what the fact's
// typed accessor (declared beside it) calls. p's analyzer must list f in
// Requires; reading a fact it does not require, or as the wrong type, is
// an error naming both, so an analyzer cannot depend on a fact silently.
func FactOf[T any](p *Pass, f *Analyzer) (T, error) {
	var zero T
	v, ok := p.resultOf[f]
	if !ok {
		return zero, fmt.Errorf("analyzer %s reads fact %s without listing it in Requires", p.Analyzer.Name, f.Name)
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("analyzer %s reads fact %s as %T, but it is a %T", p.Analyzer.Name, f.Name, zero, v)
	}
	return t, nil
}

// RunAnalyzers is Run over the analyzers as (and the facts they require)
// instead of a selection from All: for a tool or test that brings its own
// analyzer. cfg's Enable and Disable are not consulted.
func RunAnalyzers(t *trace.Trace, as []*Analyzer, cfg Config) (*Result, error) {
	return runWith(t, as, cfg)
}

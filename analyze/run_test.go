package analyze

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestRequiresScopesThePass: an analyzer reads the facts it requires,
// and only those, and never another analyzer's findings: a finding
// analyzer that runs after another sees no Result.Findings.
func TestRequiresScopesThePass(t *testing.T) {
	tr := load(t, "eggroll_hooks.json.gz")
	base := &Analyzer{Name: "base", Doc: "reports one finding", Run: func(p *Pass) ([]Finding, error) {
		return []Finding{{Title: "base finding", Subject: "s", SavingUs: 1, SavingFrom: FromGPUIdle, Fix: "f", Severity: Low, Confidence: Low}}, nil
	}}
	var sawSteps, blindSteps bool
	seenFindings := -1
	reader := &Analyzer{Name: "reader", Requires: []*Analyzer{Steps}, Run: func(p *Pass) ([]Finding, error) {
		_, err := FactOf[*StepFacts](p, Steps)
		sawSteps = err == nil
		seenFindings = len(p.Result.Findings)
		return nil, nil
	}}
	blind := &Analyzer{Name: "blind", Run: func(p *Pass) ([]Finding, error) {
		_, err := FactOf[*StepFacts](p, Steps)
		blindSteps = err == nil || p.ix.StepFacts != nil || len(p.resultOf) != 0
		return nil, nil
	}}
	r, err := runAnalyzers(tr, []*Analyzer{base, reader, blind})
	if err != nil {
		t.Fatal(err)
	}
	if !sawSteps || seenFindings != 0 {
		t.Errorf("reader saw the Steps fact %v (want true) and %d earlier findings (want 0)", sawSteps, seenFindings)
	}
	if blindSteps {
		t.Error("blind saw a fact it does not require")
	}
	if len(r.Findings) != 1 || strings.Join(r.Analyzers, ",") != "base,reader,blind" {
		t.Errorf("findings %v from analyzers %v: want base's one", r.Findings, r.Analyzers)
	}
}

// TestFactOfTypeMismatch: reading a required fact as the wrong type is an
// error naming both types, not a zero value used as if it were the fact.
func TestFactOfTypeMismatch(t *testing.T) {
	tr := load(t, "eggroll_hooks.json.gz")
	wrong := &Analyzer{Name: "wrong", Requires: []*Analyzer{Steps}, Run: func(p *Pass) ([]Finding, error) {
		_, err := FactOf[*BusyFacts](p, Steps)
		return nil, err
	}}
	_, err := runAnalyzers(tr, []*Analyzer{wrong})
	if err == nil || !strings.Contains(err.Error(), "*analyze.BusyFacts") || !strings.Contains(err.Error(), "*analyze.StepFacts") {
		t.Errorf("err = %v, want one naming the asked and the actual type", err)
	}
}

// TestValidate: each way of declaring the analyzer graph wrong is an error
// that says what is wrong, before anything runs; the real graph is valid.
func TestValidate(t *testing.T) {
	noop := func(*Pass) ([]Finding, error) { return nil, nil }
	fact := func(*Pass) (any, error) { return 1, nil }
	a := &Analyzer{Name: "a", Run: noop}
	cycle1 := &Analyzer{Name: "c1", Fact: fact}
	cycle2 := &Analyzer{Name: "c2", Fact: fact, Requires: []*Analyzer{cycle1}}
	cycle1.Requires = []*Analyzer{cycle2}
	for _, tc := range []struct {
		name string
		as   []*Analyzer
		want string
	}{
		{"duplicate name", []*Analyzer{a, {Name: "a", Run: noop}}, "two analyzers are named a"},
		{"listed twice", []*Analyzer{a, a}, "listed twice"},
		{"missing requires", []*Analyzer{{Name: "m", Run: noop, Requires: []*Analyzer{Steps, nil}}}, "Requires[1] is nil"},
		{"cycle", []*Analyzer{{Name: "x", Run: noop, Requires: []*Analyzer{cycle1}}}, "cycle: x → c1 → c2 → c1"},
		{"fact with findings", []*Analyzer{{Name: "both", Run: noop, Fact: fact}}, "both has both Fact and Run"},
		{"neither", []*Analyzer{{Name: "none"}}, "none has neither Fact nor Run"},
		{"requires findings", []*Analyzer{{Name: "r", Run: noop, Requires: []*Analyzer{a}}}, "r requires a, which is not a fact"},
		{"no name", []*Analyzer{{Run: noop}}, "has no Name"},
		{"no-metrics finding analyzer", []*Analyzer{{Name: "nm", Run: noop, NoMetrics: true}}, "nm is marked NoMetrics, which only a fact can be"},
		{"no-metrics fact after a late fact", []*Analyzer{{Name: "r2", Run: noop, Requires: []*Analyzer{{Name: "early", Fact: fact, NoMetrics: true, Requires: []*Analyzer{CustomGEMMKernels}}}}},
			"early is marked NoMetrics but requires custom-gemm-kernels, which runs after the metrics"},
	} {
		err := Validate(tc.as)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	if err := Validate(All()); err != nil {
		t.Errorf("All: %v", err)
	}
	tr := load(t, "eggroll_hooks.json.gz")
	if _, err := runAnalyzers(tr, []*Analyzer{a, {Name: "a", Run: noop}}); err == nil || !strings.Contains(err.Error(), "two analyzers are named a") {
		t.Errorf("a run with an invalid graph: err = %v", err)
	}
	// A fact whose result is findings: they would reach no report, and
	// the analyzers requiring it would read another's findings.
	sneaky := &Analyzer{Name: "findings-fact", Fact: func(*Pass) (any, error) { return []Finding{{Title: "x"}}, nil }}
	reader := &Analyzer{Name: "reader", Run: noop, Requires: []*Analyzer{sneaky}}
	if _, err := runAnalyzers(tr, []*Analyzer{reader}); err == nil || !strings.Contains(err.Error(), "fact findings-fact returns findings") {
		t.Errorf("a fact returning findings: err = %v", err)
	}
}

// TestNoMetricsFactRunsBesideMetrics: a NoMetrics fact sees no Result
// and is done before any finding analyzer starts; the findings that read
// it are those of a run where it came after the metrics.
func TestNoMetricsFactRunsBesideMetrics(t *testing.T) {
	tr := load(t, "eggroll_hooks.json.gz")
	var sawResult bool
	mk := func(noMetrics bool) []*Analyzer {
		count := &Analyzer{Name: "kernel-count", NoMetrics: noMetrics, Requires: []*Analyzer{Steps}, Fact: func(p *Pass) (any, error) {
			sawResult = sawResult || p.Result != nil
			return len(p.Trace.GPU), nil
		}}
		report := &Analyzer{Name: "report-count", Requires: []*Analyzer{count}, Run: func(p *Pass) ([]Finding, error) {
			n, err := FactOf[int](p, count)
			return []Finding{{Title: fmt.Sprint(n, " activities; ", len(p.Result.Kernels), " kernels")}}, err
		}}
		return []*Analyzer{report}
	}
	late, err := runAnalyzers(tr, mk(false))
	if err != nil || !sawResult {
		t.Fatalf("after the metrics: err %v, saw a Result %v", err, sawResult)
	}
	sawResult = false
	beside, err := runAnalyzers(tr, mk(true))
	if err != nil || sawResult {
		t.Fatalf("beside the metrics: err %v, saw a Result %v", err, sawResult)
	}
	if len(late.Findings) != 1 || len(beside.Findings) != 1 || late.Findings[0].Title != beside.Findings[0].Title {
		t.Errorf("findings %v beside the metrics, %v after them", beside.Findings, late.Findings)
	}
}

// TestUnrequiredFactIsAnError: reading a fact without requiring it fails
// the run with an error naming the analyzer, never a crash.
func TestUnrequiredFactIsAnError(t *testing.T) {
	tr := load(t, "eggroll_hooks.json.gz")
	sneaky := &Analyzer{Name: "sneaky", Run: func(p *Pass) ([]Finding, error) {
		_ = p.ix.cat[0]
		return nil, nil
	}}
	_, err := runAnalyzers(tr, []*Analyzer{sneaky})
	if err == nil || !strings.Contains(err.Error(), "analyzer sneaky") || !strings.Contains(err.Error(), "Requires") {
		t.Errorf("err = %v, want a failure of analyzer sneaky pointing at Requires", err)
	}
}

// TestAnalyzersDeclareWhatTheyRead runs every analyzer alone, with only
// its declared facts, on every fixture: one that reads an undeclared fact
// fails (TestUnrequiredFactIsAnError).
func TestAnalyzersDeclareWhatTheyRead(t *testing.T) {
	names := fixtureNames(t)
	if testing.Short() {
		// Every analyzer alone over every fixture is ~1,800 analyses:
		// minutes under -race -short, which CI adds to the full run
		// above; one fixture in four there.
		var some []string
		for i := 0; i < len(names); i += 4 {
			some = append(some, names[i])
		}
		names = some
	}
	for _, name := range names {
		tr := load(t, name)
		for _, a := range All() {
			if _, err := runAnalyzers(tr, []*Analyzer{a}); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}

// fixtureNames lists every trace fixture as load names it: the embedded
// fixtures/*.json.gz and everything in fixtures/recorded and
// fixtures/capture, so a fixture added there is checked without editing a
// list.
func fixtureNames(t testing.TB) []string {
	t.Helper()
	var names []string
	for _, pat := range []string{"*.json.gz", "recorded/*.json.gz", "recorded/issue22/*.json.gz", "recorded/issue26/*.json.gz", "capture/*.json.gz"} {
		m, err := filepath.Glob(filepath.Join("..", "fixtures", pat))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			rel, _ := filepath.Rel(filepath.Join("..", "fixtures"), p)
			names = append(names, filepath.ToSlash(rel))
		}
	}
	if len(names) < 20 {
		t.Fatalf("found only %d fixtures", len(names))
	}
	return names
}

// TestLateFact: a fact declared outside Facts (as a new fact in its own
// file is) runs once, after the metrics, which it may read, when an
// analyzer that runs requires it; an analyzer reads it through FactOf.
func TestLateFact(t *testing.T) {
	tr := load(t, "eggroll_hooks.json.gz")
	runs := 0
	stepUs := &Analyzer{Name: "step-us", Fact: func(p *Pass) (any, error) {
		runs++
		return p.Result.StepStats.SteadyWallUs, nil
	}}
	// The two readers run side by side (the analysis is a graph).
	var mu sync.Mutex
	var got []float64
	reader := func(name string) *Analyzer {
		return &Analyzer{Name: name, Requires: []*Analyzer{stepUs}, Run: func(p *Pass) ([]Finding, error) {
			v, err := FactOf[float64](p, stepUs)
			mu.Lock()
			got = append(got, v)
			mu.Unlock()
			return nil, err
		}}
	}
	r, err := runAnalyzers(tr, []*Analyzer{reader("a"), reader("b")})
	if err != nil {
		t.Fatal(err)
	}
	if runs != 1 || len(got) != 2 || got[0] != r.StepStats.SteadyWallUs || got[1] != got[0] || got[0] <= 0 {
		t.Errorf("fact ran %d times (want 1); readers got %v, want the steady step %v twice", runs, got, r.StepStats.SteadyWallUs)
	}
	if slices.Contains(r.Analyzers, "step-us") {
		t.Errorf("a fact listed among the analyzers: %v", r.Analyzers)
	}
}

package analyze

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRequiresScopesThePass: an analyzer reads the results of what it
// requires, and only those; it sees another analyzer's findings only by
// requiring it, and a required analyzer that was not selected runs without
// its findings being reported.
func TestRequiresScopesThePass(t *testing.T) {
	tr := load(t, "eggroll_hooks.json.gz")
	base := &Analyzer{Name: "base", Doc: "reports one finding", Run: func(p *Pass) ([]Finding, error) {
		return []Finding{{Title: "base finding", Subject: "s", SavingUs: 1, SavingFrom: FromGPUIdle, Fix: "f", Severity: Low, Confidence: Low}}, nil
	}}
	var sawBase, sawSteps bool
	var blindBase, blindSteps bool
	reader := &Analyzer{Name: "reader", Requires: []*Analyzer{base, Steps}, Run: func(p *Pass) ([]Finding, error) {
		fs, ok := p.ResultOf[base].([]Finding)
		sawBase = ok && len(fs) == 1 && fs[0].ID == "base"
		_, sawSteps = p.ResultOf[Steps].(*StepFacts)
		return nil, nil
	}}
	blind := &Analyzer{Name: "blind", Run: func(p *Pass) ([]Finding, error) {
		_, blindBase = p.ResultOf[base]
		blindSteps = p.ix.StepFacts != nil || len(p.ResultOf) != 0
		return nil, nil
	}}
	r, err := runAnalyzers(tr, []*Analyzer{reader, blind})
	if err != nil {
		t.Fatal(err)
	}
	if !sawBase || !sawSteps {
		t.Errorf("reader saw base's findings %v, the Steps fact %v; want both", sawBase, sawSteps)
	}
	if blindBase || blindSteps {
		t.Errorf("blind saw what it does not require: base %v, facts %v", blindBase, blindSteps)
	}
	if len(r.Findings) != 0 || strings.Join(r.Analyzers, ",") != "reader,blind" {
		t.Errorf("findings %v from analyzers %v: base was required, not selected", r.Findings, r.Analyzers)
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
	for _, name := range fixtureNames(t) {
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

package diff

import (
	"testing"

	"github.com/tracelens/tracelens/fixtures"
	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
)

// loadFixture reads one of the embedded real traces.
func loadFixture(t *testing.T, name string) *trace.Trace {
	t.Helper()
	r, err := fixtures.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := ingest.Read(r, name, ingest.Options{})
	if err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	return tr
}

func mustCompare(t *testing.T, base, new string, opt Options) *Result {
	t.Helper()
	r, err := CompareTraces(loadFixture(t, base), loadFixture(t, new), opt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

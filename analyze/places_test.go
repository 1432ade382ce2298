package analyze

import (
	"path/filepath"
	"testing"

	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
)

// The places findings point at are analyze's, for the faces to follow
// (the TUI's links): a fusion chain's evidence points at an occurrence of
// its kernels back to back on one stream, and each row of gpu-idle's gap
// table at a gap of the row's length, idle on every device.
func TestEvidencePlaces(t *testing.T) {
	var files []string
	for _, d := range []string{"../fixtures", "../fixtures/recorded", "../fixtures/capture"} {
		m, _ := filepath.Glob(filepath.Join(d, "*.json.gz"))
		files = append(files, m...)
	}
	chains, gaps := 0, 0
	for _, f := range files {
		tr, err := ingest.ReadFile(f, ingest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(tr, Config{})
		if err != nil {
			t.Fatal(err)
		}
		v := r.View()
		for _, x := range r.Findings {
			for _, e := range x.Evidence {
				if p, ok := e.Place(); ok {
					chains++
					checkChainPlace(t, f, v.Trace(), p, e.Kernels)
				}
				if e.Table == nil || x.ID != GPUIdle.Name {
					continue
				}
				for i, row := range e.Table.Rows {
					p, ok := e.RowPlace(i)
					if !ok {
						t.Errorf("%s: gap row %d has no place", f, i)
						continue
					}
					gaps++
					if got := float64(p.Span.Dur()); got != row[2].Num {
						t.Errorf("%s: gap row %d: place lasts %v, the row says %v", f, i, got, row[2].Num)
					}
					if busy := v.BusyIn(p.Span.Start, p.Span.End); busy != 0 {
						t.Errorf("%s: gap row %d: GPU busy %v inside the gap", f, i, busy)
					}
				}
			}
		}
	}
	if chains == 0 || gaps == 0 {
		t.Errorf("fixtures give %d chain places and %d gap places", chains, gaps)
	}
}

// checkChainPlace checks that p spans kernels named names, back to back
// on its stream.
func checkChainPlace(t *testing.T, f string, tr *trace.Trace, p Place, names []string) {
	t.Helper()
	var got []string
	for i := range tr.GPU {
		g := &tr.GPU[i]
		if g.Device == p.Device && g.Stream == p.Stream && g.Start >= p.Span.Start && g.End <= p.Span.End {
			got = append(got, g.Name)
		}
	}
	if len(got) != len(names) {
		t.Errorf("%s: chain place holds %d activities, the chain %d", f, len(got), len(names))
		return
	}
	for i := range got {
		if got[i] != names[i] {
			t.Errorf("%s: chain place's kernel %d is %s, the chain's %s", f, i, got[i], names[i])
		}
	}
}

package report

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/analyze"
)

// toy is an analyzer added in one file, unrelated to every other: it
// reports one finding on any trace with steps, whose saving is share of
// the steady step (none when share is negative).
func toy(share float64) *analyze.Analyzer {
	return &analyze.Analyzer{
		Name: "toy-check",
		Doc:  "A test analyzer: reports one finding saving a fixed share of the steady step.",
		Run: func(p *analyze.Pass) ([]analyze.Finding, error) {
			step := p.Result.StepStats.SteadyWallUs
			if step <= 0 || share < 0 {
				return nil, nil
			}
			return []analyze.Finding{{Title: "toy finding", Subject: "toy", Severity: analyze.Low, Confidence: analyze.Low,
				SavingUs: share * step, SavingFrom: analyze.FromGPUIdle, Fix: "nothing to fix"}}, nil
		},
	}
}

// findingSections returns a report's finding sections (from a "#### n.m"
// heading to the next heading) by title, their rank number left out, and
// each title's rank number.
func findingSections(md string) (map[string]string, map[string]string) {
	out, num := map[string]string{}, map[string]string{}
	head := regexp.MustCompile(`(?m)^#### (\d+\.\d+) (.*)$`)
	locs := head.FindAllStringSubmatchIndex(md, -1)
	for i, l := range locs {
		end := len(md)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		if j := strings.Index(md[l[1]:end], "\n#"); j >= 0 {
			end = l[1] + j + 1
		}
		title := md[l[4]:l[5]]
		out[title], num[title] = md[l[1]:end], md[l[2]:l[3]]
	}
	return out, num
}

// TestUnrelatedAnalyzerKeepsGoldens adds the toy analyzer, saving nothing
// (ranked after every finding that saves time) and 95% of the step (ranked
// first), and checks that each golden finding section is unchanged: its
// title, evidence, fix and caveats, and, with the toy ranked last, its
// rank number too. (Ranked first, the toy shifts
// the rank numbers of its tier — the report numbers findings by rank —
// and the lists that count every finding — the executive summary, "All
// findings together", the next steps — move.)
func TestUnrelatedAnalyzerKeepsGoldens(t *testing.T) {
	for _, name := range []string{"eggroll_hooks.json.gz", "fusedlinear_naive.json.gz"} {
		in := load(t, name)
		want, err := os.ReadFile(filepath.Join("testdata", "golden", strings.TrimSuffix(name, ".json.gz")+".md"))
		if err != nil {
			t.Fatal(err)
		}
		golden, goldenNum := findingSections(string(want))
		if len(golden) == 0 {
			t.Fatalf("%s: no finding sections in the golden file", name)
		}
		for _, share := range []float64{0, 0.95} {
			r, err := analyze.RunAnalyzers(in.Trace, append(analyze.All(), toy(share)), analyze.Config{})
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := Markdown(&b, []Input{{Trace: in.Trace, Result: r}}, Options{}); err != nil {
				t.Fatal(err)
			}
			got, gotNum := findingSections(b.String())
			if _, ok := got["Toy finding"]; !ok {
				t.Fatalf("%s: the toy finding is not in the report", name)
			}
			for title, sec := range golden {
				if got[title] != sec {
					t.Errorf("%s, toy saving %.1f%% of the step: section %q changed:\n%s", name, share*100, title, firstDiff(sec, got[title]))
				}
				if share == 0 && gotNum[title] != goldenNum[title] {
					t.Errorf("%s, toy ranked last: %q numbered %s, golden %s", name, title, gotNum[title], goldenNum[title])
				}
			}
		}
	}
}

// TestSilentAnalyzerKeepsGoldens: an analyzer that fires nowhere changes
// no golden file, but for the appendix's analyzer rows (TestAnalyzerAppendix
// checks them) and the no-finding sentence, which lists every analyzer
// that ran (cpu_only.md): noFindingList masks it here. For the goldens
// themselves not to change, the report should name no analyzer there (or
// TestGolden mask it as withoutAnalyzerDocs masks the appendix).
func TestSilentAnalyzerKeepsGoldens(t *testing.T) {
	for _, name := range allTraces() {
		in := load(t, name)
		r, err := analyze.RunAnalyzers(in.Trace, append(analyze.All(), toy(-1)), analyze.Config{})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := Markdown(&b, []Input{{Trace: in.Trace, Result: r}}, Options{}); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", "golden", strings.TrimSuffix(strings.TrimSuffix(name, ".gz"), ".json")+".md")
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := noFindingList(withoutAnalyzerDocs(b.String())); got != noFindingList(string(want)) {
			t.Errorf("%s: a silent analyzer changed %s:\n%s", name, path, firstDiff(string(want), got))
		}
	}
}

// noFindingList masks the list of analyzers in the report's no-finding
// sentence.
func noFindingList(md string) string {
	return regexp.MustCompile(`No finding: the \d+ analyzers that ran \([^)]*\)`).ReplaceAllString(md, "No finding: the analyzers that ran (…)")
}

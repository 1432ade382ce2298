package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/diff"
	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
	"github.com/tracelens/tracelens/tui"
)

// allFixtures lists every trace in fixtures/, fixtures/recorded and
// fixtures/capture.
func allFixtures(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{"*.json.gz", "recorded/*.json.gz", "recorded/issue22/*.json.gz", "recorded/issue26/*.json.gz", "capture/*.json.gz"} {
		m, err := filepath.Glob(fixture(pat))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) < 20 {
		t.Fatalf("found %d fixtures", len(out))
	}
	return out
}

// TestHeadlineFiguresAgreeAcrossFaces: on every fixture, the step time,
// GPU busy, kernels per step and each finding's saving read the same in
// findings (text, JSON), report (Markdown, HTML, JSON), the TUI and diff,
// because each face prints analyze's figures rather than deriving its own.
func TestHeadlineFiguresAgreeAcrossFaces(t *testing.T) {
	for _, path := range allFixtures(t) {
		name, _ := filepath.Rel(fixture(""), path)
		t.Run(name, func(t *testing.T) {
			t.Parallel() // the package's longest test: one fixture per core
			tr, err := ingest.ReadFile(path, ingest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			r, err := analyze.Run(tr, analyze.Config{})
			if err != nil {
				t.Fatal(err)
			}
			h := r.Headline()
			ss := r.StepStats
			face := func(args ...string) string {
				var out, errOut bytes.Buffer
				if code := runMain(&env{stdout: &out, stderr: &errOut}, append(args, path)); code != 0 {
					t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
				}
				return out.String()
			}

			// findings, text.
			text := face("findings")
			requireAll(t, "findings", text, h.String())
			for _, f := range r.Findings {
				if f.NoTimeCost() {
					requireAll(t, "findings", text, "no time saving: the cost is device memory")
					continue
				}
				if f.SavingFrom == analyze.FromOneOff {
					requireAll(t, "findings", text, "one-time cost ~"+analyze.FormatUs(f.OneOffUs)+" ")
					continue
				}
				if f.SavingUs == 0 && f.GPUSavingUs > 0 {
					requireAll(t, "findings", text, "saves ~0 of the step while the host is the bottleneck ("+analyze.FormatUs(f.GPUSavingUs)+" of GPU time)")
					continue
				}
				requireAll(t, "findings", text, "saves ~"+analyze.FormatUs(f.SavingUs)+" ")
			}

			// findings and report as JSON: the same numbers.
			for _, args := range [][]string{{"findings", "--format", "json"}, {"report", "--format", "json"}} {
				var got analyze.Result
				if err := json.Unmarshal([]byte(face(args...)), &got); err != nil {
					t.Fatalf("%v: %v", args, err)
				}
				g := got.StepStats
				if g.SteadyWallUs != ss.SteadyWallUs || g.SteadyGPUBusyShare != ss.SteadyGPUBusyShare || g.SteadyKernels != ss.SteadyKernels {
					t.Errorf("%v: step %v busy %v kernels %v; analyze says %v %v %v", args, g.SteadyWallUs, g.SteadyGPUBusyShare,
						g.SteadyKernels, ss.SteadyWallUs, ss.SteadyGPUBusyShare, ss.SteadyKernels)
				}
				if !reflect.DeepEqual(stepFigures(g), stepFigures(ss)) || got.Summary.GPUActivityUs != r.Summary.GPUActivityUs ||
					!reflect.DeepEqual(got.TopRange, r.TopRange) || !reflect.DeepEqual(got.SameWork, r.SameWork) {
					t.Errorf("%v: step figures %+v, analyze says %+v", args, stepFigures(g), stepFigures(ss))
				}
				if len(got.Findings) != len(r.Findings) {
					t.Fatalf("%v: %d findings, analyze has %d", args, len(got.Findings), len(r.Findings))
				}
				for i, f := range got.Findings {
					if f.SavingUs != r.Findings[i].SavingUs || f.SavingNs != r.Findings[i].SavingNs || f.Share != r.Findings[i].Share {
						t.Errorf("%v: finding %s saves %v (%v), analyze says %v", args, f.ID, f.SavingUs, f.Share, r.Findings[i].SavingUs)
					}
				}
			}

			// report, Markdown and HTML (tags stripped).
			line := "Step " + h.Step + " (" + h.StepNote + ") · GPU busy " + h.GPUBusy + " · Kernels per step " + h.KernelsPerStep
			md := strings.NewReplacer("**", "", `\_`, "_").Replace(face("report", "--format", "md"))
			html := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(face("report", "--format", "html"), "")
			for face, doc := range map[string]string{"report md": md, "report html": html} {
				requireAll(t, face, doc, line)
				for _, f := range r.Findings {
					if f.NoTimeCost() {
						requireAll(t, face, doc, "Saving no time: the cost is device memory")
						continue
					}
					if f.SavingFrom == analyze.FromOneOff {
						requireAll(t, face, doc, "Saving about "+analyze.FormatUs(f.OneOffUs)+" once")
						continue
					}
					if f.SavingUs == 0 && f.GPUSavingUs > 0 {
						requireAll(t, face, doc, "Saving no step time while the host is the bottleneck ("+analyze.FormatUs(f.GPUSavingUs)+" of GPU time)")
						continue
					}
					requireAll(t, face, doc, "Saving about "+analyze.FormatUs(f.SavingUs)+" ")
				}
				// The step figures the report quotes in prose: analyze's.
				if len(r.Steps) >= 2 && ss.MaxWallUs > ss.MinWallUs {
					spread := analyze.FormatShare(ss.WallSpread) + " of the"
					if ss.WallSpread >= 2 {
						spread = fmt.Sprintf("%.1f× the", ss.WallSpread)
					}
					requireAll(t, face, doc, fmt.Sprintf("Wall time ranges from %s (#%d) to %s (#%d), a spread of %s median.",
						analyze.FormatUs(ss.MinWallUs), ss.MinWallStep, analyze.FormatUs(ss.MaxWallUs), ss.MaxWallStep, spread))
				}
				if ss.FirstStepRatio > 0 {
					requireAll(t, face, doc, fmt.Sprintf("The first step is %.2f× the median of the others", ss.FirstStepRatio))
				}
			}

			// the TUI: overview and findings screens.
			over := tuiScreen(t, tr, path)
			if len(r.Steps) > 0 && !r.Summary.StepsSynthetic {
				requireAll(t, "tui overview", over, "min "+analyze.FormatUs(ss.MinWallUs)+"  max "+analyze.FormatUs(ss.MaxWallUs))
			}
			requireAll(t, "tui overview", over, "step "+h.Step+" ("+h.StepNote+")", "busy "+h.GPUBusy+" of the step", "Per step    "+h.KernelsPerStep+" kernels")
			if len(r.Findings) > 0 {
				fs := tuiScreen(t, tr, path, "4")
				for _, f := range r.Findings {
					if f.NoTimeCost() {
						requireAll(t, "tui findings", fs, " memory ")
						continue
					}
					if f.SavingFrom == analyze.FromOneOff {
						requireAll(t, "tui findings", fs, " once "+analyze.FormatUs(f.OneOffUs)+" ")
						continue
					}
					requireAll(t, "tui findings", fs, " "+analyze.FormatUs(f.SavingUs)+" ")
				}
			}

			// diff of the trace with itself: analyze's medians and savings.
			d, err := diff.Compare(r, r, diff.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for key, want := range map[string]float64{diff.StepWall: ss.SteadyWallUs, diff.StepTime: ss.SteadyPeriodUs, diff.GPUBusy: ss.SteadyGPUBusyUs, diff.Kernels: ss.SteadyKernels} {
				if m := d.Metric(key); m.Base.Median != want || m.New.Median != want {
					t.Errorf("diff %s: %v → %v, analyze says %v", key, m.Base.Median, m.New.Median, want)
				}
			}
			var dtext bytes.Buffer
			if err := diff.WriteText(&dtext, d); err != nil {
				t.Fatal(err)
			}
			requireAll(t, "diff", dtext.String(), "step period "+diff.FormatTime(ss.SteadyPeriodUs)+" → "+diff.FormatTime(ss.SteadyPeriodUs))
			bySubject := map[string]float64{}
			for _, f := range r.Findings {
				bySubject[f.ID+"\x00"+f.Subject] += f.SavingUs
			}
			for _, f := range d.Findings.Persisting {
				if want := bySubject[f.ID+"\x00"+f.Subject]; f.BaseSavingUs != want || f.NewSavingUs != want {
					t.Errorf("diff finding %s %q: %v → %v, analyze says %v", f.ID, f.Subject, f.BaseSavingUs, f.NewSavingUs, want)
				}
			}
			if len(d.Findings.Persisting) != len(bySubject) {
				t.Errorf("diff has %d persisting findings, analyze %d distinct", len(d.Findings.Persisting), len(bySubject))
			}
		})
	}
}

// stepFigures is the part of StepStats that faces quote in prose.
func stepFigures(s analyze.StepStats) []any {
	return []any{s.Median, s.MedianNoFirst, s.MinWallUs, s.MinWallStep, s.MaxWallUs, s.MaxWallStep, s.WallSpread, s.FirstStepRatio, s.WarmUp,
		s.SteadyGPUIdleShare, s.SteadyComputeShare, s.ComputeBound, s.SteadyLaunchAPIIdleShare, s.ForwardShare, s.BackwardShare, s.OptimizerShare}
}

func requireAll(t *testing.T, face, doc string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(doc, w) {
			t.Errorf("%s lacks %q", face, w)
		}
	}
}

// tuiScreen renders the TUI on tr at 200×60 after pressing keys.
func tuiScreen(t *testing.T, tr *trace.Trace, name string, keys ...string) string {
	t.Helper()
	r := lipgloss.NewRenderer(&bytes.Buffer{})
	r.SetColorProfile(termenv.Ascii)
	m := tui.New(tui.Options{Name: name, Renderer: r, Load: func(func(int64, int64)) (*trace.Trace, error) { return tr, nil }})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	// Init batches the load with the progress ticker; run the load only
	// and feed its result. The ticker sleeps 100 ms to redraw a progress
	// line the screens below never show: run for every fuzz input, it
	// held FuzzPipeline to ~144 inputs a minute (issue 27).
	batch, ok := m.Init()().(tea.BatchMsg)
	if !ok || len(batch) == 0 {
		t.Fatal("Init did not batch its commands")
	}
	if msg := batch[0](); msg != nil {
		m.Update(msg)
	}
	for _, k := range keys {
		m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)})
	}
	return m.View()
}

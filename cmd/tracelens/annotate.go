package main

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/trace"
)

const annotateArgs = "-o OUT.json[.gz] TRACE"

func annotateCommand() command {
	return command{name: "annotate", args: annotateArgs, summary: "write the trace with its findings on the timeline (a findings track, arrows to their kernels) for ui.perfetto.dev", run: runAnnotate,
		examples: []string{
			"tracelens annotate -o annotated.json trace.json",
			"tracelens annotate -o annotated.json.gz embedded:eggroll_hooks.json.gz",
		}}
}

func runAnnotate(e *env, args []string) error {
	fs := newFlags("annotate")
	out := fs.String("o", "", "write the annotated trace to `FILE` (gzip when it ends in .gz)")
	pos, err := parseFlags(e, fs, annotateArgs, args)
	if err != nil {
		return err
	}
	path, err := oneTrace(pos)
	if err != nil {
		return err
	}
	if *out == "" {
		return usageError{"missing -o OUT.json: annotate writes a new trace file and leaves the input as it is"}
	}
	if err := refuseOutputOverInput(*out, pos); err != nil {
		return err
	}
	// Standard input and embedded traces become files: the trace is read
	// twice, once into the model and once to copy its events.
	files, _, cleanup, err := materialize(e, pos)
	defer cleanup()
	if err != nil {
		return err
	}
	t, err := loadTrace(e, files[0])
	if err != nil {
		return err
	}
	if t.Meta.Format == "nsys" {
		return fmt.Errorf("%s: annotate adds to Chrome trace JSON; this is an Nsight Systems report (open it in Nsight Systems)", path)
	}
	r, err := e.analyzeWithin(path, t, e.cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	marks := findingMarks(r)
	n, err := writeAnnotated(files[0], *out, marks)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%s: %s on the track %q, %s to their kernels; open it in https://ui.perfetto.dev\n",
		*out, plural(len(r.Findings), "finding"), findingsTrack, plural(n, "arrow"))
	return nil
}

// maxArrows bounds the arrows from one finding's span to its kernels, so
// a finding about a kernel launched a million times stays readable.
const maxArrows = 16

// mark is one finding's span on the timeline and the kernel launches it
// points at (their names and start times: how the trace's own events are
// found again).
type mark struct {
	number  int
	f       *analyze.Finding
	span    trace.Span
	where   string
	kernels []kernelRef
	// inSpan is the number of launches of the finding's kernels in span;
	// kernels holds the first maxArrows.
	inSpan int
}

// kernelRef names one kernel launch: its name and start.
type kernelRef struct {
	name  string
	start trace.Time
}

// findingMarks places each finding of r on the timeline: once per place
// its evidence points at (a fusion chain's first run, an idle gap), else
// over the first steady step; each mark lists the launches of the
// kernels the finding names inside its span.
func findingMarks(r *analyze.Result) []mark {
	v := r.View()
	if v == nil {
		return nil
	}
	t := v.Trace()
	var marks []mark
	for i := range r.Findings {
		f := &r.Findings[i]
		var names []string
		var places []analyze.Place
		for j := range f.Evidence {
			ev := &f.Evidence[j]
			names = append(names, ev.Kernels...)
			if p, ok := ev.Place(); ok {
				places = append(places, p)
			}
			if ev.Table != nil {
				for k := range ev.Table.Rows {
					if p, ok := ev.RowPlace(k); ok {
						places = append(places, p)
					}
				}
			}
		}
		if len(places) == 0 {
			places = append(places, stepPlace(v))
		}
		for _, p := range places {
			if p.Span.End <= p.Span.Start || slices.ContainsFunc(marks, func(m mark) bool { return m.number == i+1 && m.span.Start == p.Span.Start && m.span.End == p.Span.End }) {
				continue
			}
			m := mark{number: i + 1, f: f, span: p.Span, where: p.What}
			m.kernels, m.inSpan = launchesIn(t, names, p)
			marks = append(marks, m)
		}
	}
	return marks
}

// stepPlace is the place of a finding that names none: the first steady
// step, host span and the GPU work it launched, or the whole trace when
// it marks no steps.
func stepPlace(v *analyze.View) analyze.Place {
	t := v.Trace()
	if len(t.Steps) == 0 {
		return analyze.Place{Span: t.Span(), Device: -1, Stream: -1, What: "the whole trace (the finding names no single place)"}
	}
	si := analyze.FirstSteady(len(t.Steps))
	s := t.Steps[si]
	span := s.Span
	for g := range t.GPU {
		if v.StepOf(g) == si {
			span.Start, span.End = min(span.Start, t.GPU[g].Start), max(span.End, t.GPU[g].End)
		}
	}
	return analyze.Place{Span: span, Device: -1, Stream: -1, What: fmt.Sprintf("step %d, the first steady step (the finding names no single place)", s.Number)}
}

// launchesIn returns the first maxArrows launches of kernels named names
// that start inside place (on its stream when it names one), and how
// many there are.
func launchesIn(t *trace.Trace, names []string, p analyze.Place) ([]kernelRef, int) {
	if len(names) == 0 {
		return nil, 0
	}
	var refs []kernelRef
	for i := range t.GPU {
		g := &t.GPU[i]
		if g.Kind != trace.Kernel || g.Start < p.Span.Start || g.Start >= p.Span.End || !slices.Contains(names, g.Name) {
			continue
		}
		if p.Stream >= 0 && (g.Device != p.Device || g.Stream != p.Stream) {
			continue
		}
		refs = append(refs, kernelRef{name: g.Name, start: g.Start})
	}
	// The GPU activities are in stream order: the arrows go to the first
	// launches in time.
	slices.SortStableFunc(refs, func(a, b kernelRef) int { return cmp.Compare(a.start, b.start) })
	return refs[:min(len(refs), maxArrows)], len(refs)
}

// plural writes n and a noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

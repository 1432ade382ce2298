package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// Analyzer detects one kind of performance problem. Its Name is the id of
// the findings it returns (part of the JSON contract); Doc says in one
// paragraph what it detects, how, and with which thresholds.
type Analyzer struct {
	Name string
	Doc  string
	// Run reads the shared metrics in the pass and returns findings; none
	// is a valid answer.
	Run func(*Pass) ([]Finding, error)
}

// Pass is what an analyzer reads: the trace, the metrics computed once for
// all analyzers, and indexes over the trace.
type Pass struct {
	Trace *trace.Trace
	// Result holds every metric; its Findings are not filled in yet.
	Result *Result
	ix     *index
	// compile caches compileSpans (two analyzers need it).
	compile *[]trace.Span
}

// Config selects analyzers by name. An empty Enable means all of them;
// Disable removes names from that set.
type Config struct {
	Enable  []string
	Disable []string
}

// Run computes every metric over t and runs the selected analyzers. Its
// findings are ranked by saving, largest first. It returns an error for an
// unknown analyzer name or when an analyzer fails.
func Run(t *trace.Trace, cfg Config) (*Result, error) {
	as, err := Select(cfg.Enable, cfg.Disable)
	if err != nil {
		return nil, err
	}
	ix := newIndex(t)
	r := ix.metrics()
	p := &Pass{Trace: t, Result: r, ix: ix}
	r.Findings = []Finding{}
	r.Analyzers = []string{}
	for _, a := range as {
		fs, err := a.Run(p)
		if err != nil {
			return nil, fmt.Errorf("analyzer %s: %w", a.Name, err)
		}
		for i := range fs {
			if err := p.finish(&fs[i], a.Name); err != nil {
				return nil, fmt.Errorf("analyzer %s: %w", a.Name, err)
			}
		}
		r.Findings = append(r.Findings, fs...)
		r.Analyzers = append(r.Analyzers, a.Name)
	}
	slices.SortStableFunc(r.Findings, func(a, b Finding) int {
		if c := cmp.Compare(b.SavingUs, a.SavingUs); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	combineSavings(r)
	return r, nil
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
		GPUIdle,
		CompileOverhead,
		CustomGEMM,
		HostSync,
		PageableMemcpy,
		SmallMemcpy,
		TF32Disabled,
		FP64Compute,
		UnfusedAttention,
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

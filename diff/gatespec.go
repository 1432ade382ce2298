package diff

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/analyze"
)

// Gate target kinds (GateTarget.Kind), as --gate names them.
const (
	GateStep     = "step"     // the step time (StepTime)
	GateGPUBusy  = "gpu_busy" // GPU busy time per step (GPUBusy)
	GateLedger   = "ledger"   // one step-ledger line: ledger:host_sync
	GateCategory = "category" // one kernel category row: category:gemm
	GateKernel   = "kernel"   // one kernel row, by name: kernel:NAME
)

// LedgerGateFloorPct is, in percent of the base step time, how much a
// ledger line must grow for its gate to trip on top of the threshold
// (which is in percent of the line): a line going from 0.1 to 0.5 µs is
// +400 % and no regression.
const LedgerGateFloorPct = 1

// GateTarget is one thing --gate guards: Kind, and for ledger, category
// and kernel the line, category or kernel Name.
type GateTarget struct {
	Kind, Name string
}

// String writes the target the way ParseGate reads it.
func (g GateTarget) String() string {
	if g.Name == "" {
		return g.Kind
	}
	return g.Kind + ":" + g.Name
}

// DefaultGate is what --fail-on-regression guards without --gate.
var DefaultGate = []GateTarget{{Kind: GateStep}, {Kind: GateGPUBusy}}

// ParseGate reads a comma-separated gate list: step, gpu_busy,
// ledger:LINE (a line of analyze.LedgerLines or step_time_minus_wall),
// category:NAME, kernel:NAME (a kernel row's name, or a substring of
// exactly one row's name).
func ParseGate(s string) ([]GateTarget, error) {
	var out []GateTarget
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		kind, name, _ := strings.Cut(part, ":")
		g := GateTarget{Kind: kind, Name: strings.TrimSpace(name)}
		switch kind {
		case GateStep, GateGPUBusy:
			if g.Name != "" {
				return nil, fmt.Errorf("gate %q takes no name", part)
			}
		case GateLedger:
			if !slices.Contains(analyze.LedgerLines(), g.Name) && g.Name != LineWallExcess {
				return nil, fmt.Errorf("gate %q: unknown ledger line (want one of %s)", part, strings.Join(analyze.LedgerLines(), ", "))
			}
		case GateCategory, GateKernel:
			if g.Name == "" {
				return nil, fmt.Errorf("gate %q needs a name (%s:NAME)", part, kind)
			}
		default:
			return nil, fmt.Errorf("unknown gate %q (want step, gpu_busy, ledger:LINE, category:NAME or kernel:NAME)", part)
		}
		out = append(out, g)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty gate list")
	}
	return out, nil
}

// GateOn checks each target for a regression larger than thresholdPct
// percent, as Gate does for the default targets: failures lists the
// targets that tripped (the gate fails when it is non-empty), untested
// those of them judged without a significance test, saying why in their
// text. A target the runs do not have (a kernel neither ran) is a
// failure too: a gate must not pass on a misspelt name.
func (r *Result) GateOn(targets []GateTarget, thresholdPct float64) (failures, untested []string) {
	for _, g := range targets {
		var msg string
		var tested bool
		switch g.Kind {
		case GateStep, GateGPUBusy:
			key := map[string]string{GateStep: StepTime, GateGPUBusy: GPUBusy}[g.Kind]
			msg, tested = r.gateMetric(key, thresholdPct)
		case GateLedger:
			msg, tested = r.gateLedger(g.Name, thresholdPct)
		case GateCategory, GateKernel:
			msg, tested = r.gateRow(g, thresholdPct)
		}
		if msg == "" {
			continue
		}
		failures = append(failures, g.String()+": "+msg)
		if !tested {
			untested = append(untested, g.String()+": "+msg)
		}
	}
	return failures, untested
}

// gateMetric judges one summary metric as Gate does.
func (r *Result) gateMetric(key string, thresholdPct float64) (string, bool) {
	m := r.Metric(key)
	if m == nil || !(m.Pct > thresholdPct) {
		return "", true
	}
	what := fmt.Sprintf("%s %s → %s (%s, p=%.3f n=%d+%d)", m.Name, formatValue(m.Base.Median, m.Time),
		formatValue(m.New.Median, m.Time), FormatPct(m.Pct), m.P, len(m.Base.Values), len(m.New.Values))
	switch {
	case m.Significant:
		return fmt.Sprintf("regressed more than %g%%: %s", thresholdPct, what), true
	case m.Note != "":
		return fmt.Sprintf("regressed more than %g%% by the medians; significance could not be tested (%s): %s", thresholdPct, m.Note, what), false
	}
	return "", true
}

// gateLedger judges one ledger line of the step change: it trips when the
// line grew by more than thresholdPct of its base time and by more than
// LedgerGateFloorPct of the base step time. Ledger lines carry no test:
// the message says whether the steady steps' ranges overlap (LoUs > 0:
// every new step's line is above every base step's).
func (r *Result) gateLedger(line string, thresholdPct float64) (string, bool) {
	c := &r.StepChange
	i := slices.IndexFunc(c.Lines, func(l LineChange) bool { return l.Line == line })
	if i < 0 {
		return "", true // zero on both sides
	}
	l := c.Lines[i]
	pct := math.Inf(1)
	if l.BaseUs > 0 {
		pct = 100 * l.DeltaUs / l.BaseUs
	}
	if !(pct > thresholdPct) || !(l.DeltaUs > LedgerGateFloorPct/100*c.BaseUs) {
		return "", true
	}
	overlap := "the steady steps' ranges do not overlap"
	if l.LoUs <= 0 {
		overlap = "the steady steps' ranges overlap"
	}
	return fmt.Sprintf("ledger line %s grew more than %g%%: %s → %s per step (%+.1f µs, interval %+.1f … %+.1f µs; %s; no significance test)",
		l.Text, thresholdPct, formatValue(l.BaseUs, true), formatValue(l.NewUs, true), l.DeltaUs, l.LoUs, l.HiUs, overlap), false
}

// gateRow judges a category or kernel row by its Delta, as a metric.
func (r *Result) gateRow(g GateTarget, thresholdPct float64) (string, bool) {
	rows := r.Categories
	if g.Kind == GateKernel {
		rows = r.Kernels
	}
	i := slices.IndexFunc(rows, func(row Row) bool { return row.Name == g.Name })
	if i < 0 && g.Kind == GateKernel {
		var hits []int
		for j := range rows {
			if strings.Contains(rows[j].Name, g.Name) {
				hits = append(hits, j)
			}
		}
		if len(hits) > 1 {
			return fmt.Sprintf("%d kernels match %q: name one", len(hits), g.Name), true
		}
		if len(hits) == 1 {
			i = hits[0]
		}
	}
	if i < 0 {
		return fmt.Sprintf("no %s row named %q in either run", g.Kind, g.Name), true
	}
	row := rows[i]
	if row.Status == Added {
		return fmt.Sprintf("%s %s is new: %s per step", g.Kind, row.Name, formatValue(row.New.Median, true)), true
	}
	if !(row.Pct > thresholdPct) {
		return "", true
	}
	what := fmt.Sprintf("%s %s → %s per step (%s, p=%.3f n=%d+%d)", row.Name, formatValue(row.Base.Median, true),
		formatValue(row.New.Median, true), FormatPct(row.Pct), row.P, len(row.Base.Values), len(row.New.Values))
	switch {
	case row.Significant:
		return fmt.Sprintf("regressed more than %g%%: %s", thresholdPct, what), true
	case row.Note != "":
		return fmt.Sprintf("regressed more than %g%% by the medians; significance could not be tested (%s): %s", thresholdPct, row.Note, what), false
	}
	return "", true
}

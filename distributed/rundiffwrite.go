package distributed

import (
	"fmt"
	"io"
	"strings"

	"github.com/tracelens/tracelens/diff"
	"github.com/tracelens/tracelens/termtext"
)

// runMetricName is how tables label a run-diff metric.
var runMetricName = map[string]string{
	MetricStepWall:        "step wall",
	MetricLate:            "late (makes others wait)",
	MetricPeerWait:        "peer wait (spinning)",
	MetricTransfer:        "transfer",
	MetricExposedTransfer: "exposed transfer",
	MetricExposedComm:     "exposed communication",
	MetricCommKernel:      "communication kernels",
}

// WriteRunDiff writes d as text (md false) or Markdown: the cross-rank
// findings new, resolved and persisting, then every rank's figures per
// step. Names from the traces pass through termtext.Sanitize.
func WriteRunDiff(w io.Writer, d *RunDiff, md bool) error {
	var b strings.Builder
	if md {
		b.WriteString("\n### Cross-rank findings\n\n")
	} else {
		b.WriteString("\nCross-rank findings\n")
	}
	findings := func(label string, cs []RunFindingChange) {
		for _, c := range cs {
			line := fmt.Sprintf("%s %s %s: %s (saving per step %s → %s)", label, c.ID, termtext.Sanitize(c.Subject),
				termtext.Sanitize(c.Title), diff.FormatTime(c.BaseSavingUs), diff.FormatTime(c.NewSavingUs))
			if md {
				fmt.Fprintf(&b, "- **%s**\n", line)
			} else {
				fmt.Fprintf(&b, "  %s\n", line)
			}
		}
	}
	findings("new", d.New)
	findings("resolved", d.Resolved)
	findings("persisting", d.Persisting)
	if len(d.New)+len(d.Resolved)+len(d.Persisting) == 0 {
		b.WriteString("  none in either run\n")
	}
	if len(d.OnlyBase)+len(d.OnlyNew) > 0 {
		fmt.Fprintf(&b, "\nranks only in base: %s; only in new: %s\n", ints(d.OnlyBase), ints(d.OnlyNew))
	}
	if md {
		b.WriteString("\n### Every rank per step\n\n| metric | rank | base | new | delta | p |\n|---|---:|---:|---:|---:|---:|\n")
	} else {
		fmt.Fprintf(&b, "\nEvery rank per step (medians; Mann–Whitney U at α=%g; a waiting rank's spinning NCCL kernels are peer wait, not work)\n%-26s %5s %10s %10s %9s %6s\n",
			d.Alpha, "METRIC", "RANK", "BASE", "NEW", "DELTA", "P")
	}
	for _, r := range d.Rows {
		delta := diff.FormatPct(r.Delta.Pct)
		if r.Significant {
			delta += " *"
		}
		cells := []string{runMetricName[r.Metric], r.Rank, diff.FormatTime(r.BaseUs), diff.FormatTime(r.NewUs), delta, fmt.Sprintf("%.3f", r.P)}
		if md {
			fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
			continue
		}
		fmt.Fprintf(&b, "%-26s %5s %10s %10s %9s %6s\n", cells[0], cells[1], cells[2], cells[3], cells[4], cells[5])
	}
	b.WriteString("\n* significant at α; the first step is dropped unless --keep-warmup. late: the rank's arrival after the median of the others at the collectives it reached last; peer wait: its wait for later ranks that no compute of its own hid.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

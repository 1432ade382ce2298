package main

import (
	"cmp"
	"fmt"
	"io"
	"regexp"
	"slices"
	"unicode/utf8"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/distributed"
	"github.com/tracelens/tracelens/jsonout"
	"github.com/tracelens/tracelens/termtext"
	"github.com/tracelens/tracelens/trace"
)

const topArgs = "[-n N] [--sort total|count|mean|max] [--filter REGEX] [--format text|json|csv] [--wide] TRACE"

func topCommand() command {
	return command{name: "top", args: topArgs, summary: "rank kernels by GPU time (count, total, mean, median, p95, min, max, share)", run: runTop,
		examples: []string{
			"tracelens top trace.json",
			"tracelens top -n 5 --sort count trace.json",
			"tracelens top --filter 'gemm|cutlass' --wide trace.json",
			"tracelens top --format csv -n 0 trace.json > kernels.csv",
		}}
}

// topJSON is the machine-readable form of `top`. Later commands extend this
// schema; they never change what is here.
type topJSON struct {
	Summary topSummary             `json:"summary"`
	Kernels []analyze.KernelTiming `json:"kernels"`
}

type topSummary struct {
	Events          int     `json:"events"`
	KernelLaunches  int     `json:"kernel_launches"`
	DistinctKernels int     `json:"distinct_kernels"`
	GPUKernelUs     float64 `json:"gpu_kernel_us"`
	Device          string  `json:"device"`
}

func runTop(e *env, args []string) error {
	fs := newFlags("top")
	n := fs.Int("n", 20, "show the top `N` kernels (0 = all)")
	sortBy := fs.String("sort", "total", "sort by `KEY`: total, count, mean or max")
	format := fs.String("format", "text", "output `FORMAT`: text, json or csv (a header row, then every column of every kernel shown)")
	filter := fs.String("filter", "", "list only the kernels whose full name matches `REGEX` (Go syntax: 'gemm|cutlass', '(?i)attention')")
	pos, err := parseFlags(e, fs, topArgs, args)
	if err != nil {
		return err
	}
	rf := &e.run
	path, err := oneTrace(pos)
	if err != nil {
		return err
	}
	if *n < 0 {
		return usageError{"-n must be >= 0"}
	}
	less, ok := kernelOrders[*sortBy]
	if !ok {
		return usageError{fmt.Sprintf("unknown --sort %q (want total, count, mean or max)", *sortBy)}
	}
	if *format != "text" && *format != "json" && *format != "csv" {
		return usageError{fmt.Sprintf("unknown --format %q (want text, json or csv)", *format)}
	}
	opt := topOptions{n: *n, format: *format}
	if *filter != "" {
		if opt.filter, err = regexp.Compile(*filter); err != nil {
			return usageError{fmt.Sprintf("bad --filter: %v", err)}
		}
	}
	if distributed.IsRun(pos) {
		return runTopRun(e, pos, rf, opt)
	}
	t, err := loadKernels(e, path)
	if err != nil {
		return err
	}
	rows, all := analyze.KernelTable(t)
	slices.SortStableFunc(rows, less)
	launches := 0
	for _, r := range rows {
		launches += r.Count
	}
	matched := keep(opt, rows, func(k analyze.KernelStat) string { return k.Name })
	shown := matched
	if *n > 0 && len(shown) > *n {
		shown = shown[:*n]
	}
	switch *format {
	case "csv":
		return writeTopCSV(e.stdout, shown)
	case "json":
		out := topJSON{Summary: topSummary{Events: t.Events, KernelLaunches: launches, DistinctKernels: len(rows), GPUKernelUs: all.Micros(), Device: t.DeviceName()}}
		out.Kernels = make([]analyze.KernelTiming, 0, len(shown))
		for i := range shown {
			out.Kernels = append(out.Kernels, shown[i].Timing())
		}
		return jsonout.Write(e.stdout, out)
	}
	tb := topTable{t: t, rows: rows, matched: len(matched), shown: shown, all: all, launches: launches}
	if opt.filter != nil {
		tb.filter = opt.filter.String()
	}
	writeTopText(e.stdout, tb, e.nameWidth(topNameWidth))
	return nil
}

var kernelOrders = map[string]func(a, b analyze.KernelStat) int{
	"total": func(a, b analyze.KernelStat) int { return cmp.Compare(b.Total, a.Total) },
	"count": func(a, b analyze.KernelStat) int { return cmp.Compare(b.Count, a.Count) },
	"mean":  func(a, b analyze.KernelStat) int { return cmp.Compare(b.Mean, a.Mean) },
	"max":   func(a, b analyze.KernelStat) int { return cmp.Compare(b.Max, a.Max) },
}

// topAutotuneMark prefixes the rows of kernels torch.compile's autotuner
// launched (KernelStat.Autotune).
const topAutotuneMark = "[autotune] "

// topNameWidth makes a row exactly 100 columns: the numeric columns take 61.
const topNameWidth = 39

// topTable is what the kernel table shows: the trace's kernels (rows,
// their launches and time), those the filter kept (matched; all without
// one) and the first of those that -n shows.
type topTable struct {
	t        *trace.Trace
	rows     []analyze.KernelStat
	matched  int
	shown    []analyze.KernelStat
	all      trace.Duration
	launches int
	// filter is --filter's expression, "" without one.
	filter string
}

// writeTopText writes the kernel table, its names cut to width runes
// (0: whole, --wide) and distinct.
func writeTopText(w io.Writer, tb topTable, width int) {
	dev := tb.t.DeviceName()
	if dev == "" {
		dev = "unknown device"
	}
	fmt.Fprintf(w, "%s\n%s: %d kernel launches, %d distinct kernels, %s of GPU kernel time\n",
		termtext.Sanitize(tb.t.Source), termtext.Sanitize(dev), tb.launches, len(tb.rows), tb.all)
	if tb.filter != "" {
		fmt.Fprintf(w, "--filter %s: %d of %d kernels match\n", termtext.Sanitize(tb.filter), tb.matched, len(tb.rows))
	}
	fmt.Fprintln(w)
	if len(tb.rows) == 0 {
		fmt.Fprintln(w, "no GPU kernels in this trace")
		return
	}
	if tb.matched == 0 {
		fmt.Fprintln(w, "no kernel name matches the filter")
		return
	}
	names := topNames(tb.shown, width)
	nameW := topNameWidth
	for _, n := range names {
		nameW = max(nameW, utf8.RuneCountInString(n))
	}
	fmt.Fprintf(w, "%-*s %6s %7s %7s %7s %7s %7s %7s %5s\n", nameW, "KERNEL", "COUNT", "TOTAL", "MEAN", "MEDIAN", "P95", "MIN", "MAX", "SHARE")
	for i, r := range tb.shown {
		fmt.Fprintf(w, "%-*s %6d %7s %7s %7s %7s %7s %7s %4.1f%%\n", nameW, names[i],
			r.Count, r.Total, r.Mean, r.Median, r.P95, r.Min, r.Max, r.Share*100)
	}
	if len(tb.shown) < tb.matched {
		fmt.Fprintf(w, "... %d more kernels (use -n 0 for all)\n", tb.matched-len(tb.shown))
	}
}

// topNames are the printed names of the rows: short kernel names fitted
// into width runes (0: full names), distinct for different kernels.
// torch.compile's autotuner launches carry topAutotuneMark: compile cost,
// not the workload's.
func topNames(rows []analyze.KernelStat, width int) []string {
	labels := make([]string, len(rows))
	fulls := make([]string, len(rows))
	for i, r := range rows {
		mark := ""
		if r.Autotune {
			mark = topAutotuneMark
		}
		labels[i] = mark + analyze.ShortKernelName(r.Name)
		fulls[i] = mark + r.Name
		if width <= 0 {
			labels[i] = fulls[i]
		}
	}
	return termtext.DistinctNames(labels, fulls, width)
}

// shortNames are the short forms of kernel names for a table, or the
// names themselves when wide.
func shortNames(names []string, wide bool) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n
		if !wide {
			out[i] = analyze.ShortKernelName(n)
		}
	}
	return out
}

// ShortenName fits a kernel name into width runes, cutting the middle so
// both the namespace and the distinguishing tail stay visible, and making
// control characters harmless.
func ShortenName(name string, width int) string {
	clean := []rune(termtext.Sanitize(name))
	if len(clean) <= width {
		return string(clean)
	}
	head := (width - 1) / 2
	tail := width - 1 - head
	return string(clean[:head]) + "…" + string(clean[len(clean)-tail:])
}

// nameWidth is the width of a table's name column: width, or 0 (whole
// names) with --wide.
func (e *env) nameWidth(width int) int {
	if e.wide {
		return 0
	}
	return width
}

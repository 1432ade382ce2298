package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/distributed"
)

// topOptions are what `top` shows of a trace's or a run's kernels.
type topOptions struct {
	// n is how many kernels to show (0: all).
	n int
	// format is text, json or csv.
	format string
	// filter keeps the kernels whose full name matches it (nil: all).
	filter *regexp.Regexp
}

// keep returns the rows whose name the filter matches, all without one.
func keep[T any](o topOptions, rows []T, name func(T) string) []T {
	if o.filter == nil {
		return rows
	}
	var out []T
	for _, r := range rows {
		if o.filter.MatchString(name(r)) {
			out = append(out, r)
		}
	}
	return out
}

// csvNum writes a number as CSV readers parse it: the shortest decimal
// that reads back exactly, never an exponent a spreadsheet might not read.
func csvNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// writeTopCSV writes the kernel table as CSV: a header row, then one row
// per kernel with every column of `top --format json` (times in µs,
// share a fraction), names whole.
func writeTopCSV(w io.Writer, rows []analyze.KernelStat) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"kernel", "autotune", "count", "total_us", "mean_us", "median_us", "p95_us", "min_us", "max_us", "share"})
	for i := range rows {
		k := rows[i].Timing()
		cw.Write([]string{k.Name, strconv.FormatBool(k.Autotune), strconv.Itoa(k.Count), csvNum(k.TotalUs), csvNum(k.MeanUs),
			csvNum(k.MedianUs), csvNum(k.P95Us), csvNum(k.MinUs), csvNum(k.MaxUs), csvNum(k.Share)})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	return nil
}

// writeTopRunCSV writes a run's kernel table as CSV: the columns of
// `top --format json` on a run.
func writeTopRunCSV(w io.Writer, rows []distributed.RunKernel, comm *regexp.Regexp) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"kernel", "count", "total_us", "mean_us", "min_us", "max_us", "ranks", "rank_min_us", "rank_min_at", "rank_max_us", "rank_max_at", "communication", "share"})
	for _, k := range rows {
		cw.Write([]string{k.Name, strconv.Itoa(k.Count), csvNum(k.Total.Micros()), csvNum(k.Mean.Micros()), csvNum(k.Min.Micros()), csvNum(k.Max.Micros()),
			strconv.Itoa(k.Ranks), csvNum(k.RankMin.Micros()), strconv.Itoa(k.RankMinAt), csvNum(k.RankMax.Micros()), strconv.Itoa(k.RankMaxAt),
			strconv.FormatBool(distributed.IsCommKernel(k.Name, comm)), csvNum(k.Share)})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	return nil
}

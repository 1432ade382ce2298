package ingest

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/tracelens/tracelens/membudget"
)

// BudgetError reports a trace whose model would not fit the memory budget
// (Options.MaxMemory). Reading stops as soon as the model passes the
// budget, so a small file that expands to billions of events fails fast
// instead of exhausting the machine.
type BudgetError struct {
	// Budget is the limit the model passed, in bytes.
	Budget int64
	// Need estimates the whole model's size in bytes, extrapolated from the
	// fraction of the input read; 0 when the input's size is unknown.
	Need int64
	// Events is the number of events read when reading stopped.
	Events int
	// Read is the fraction of the input read (0 when unknown).
	Read float64
	// Value, when positive, is the length read so far of one JSON value
	// (a string, a number, an event) that did not end before the scanner's
	// buffer reached its share of the budget; Offset is the byte where
	// the value's text (or the separator before it) begins, counted in
	// the decompressed JSON when Compressed.
	Value, Offset int64
	Compressed    bool
}

func (e *BudgetError) Error() string {
	if e.Value > 0 {
		where := fmt.Sprintf("byte %d", e.Offset)
		if e.Compressed {
			where += " of the decompressed JSON"
		}
		return fmt.Sprintf("scanning: one JSON value at %s is longer than %s and not yet ended; "+
			"reading it would pass the memory budget of %s (one value may take a quarter of it)",
			where, FormatBytes(e.Value), FormatBytes(e.Budget))
	}
	if e.Need <= 0 {
		return fmt.Sprintf("the trace needs more memory than the budget of %s: its first %d events already take half of it (the other half is for reading and the analysis)",
			FormatBytes(e.Budget), e.Events)
	}
	if e.Need <= e.Budget {
		return fmt.Sprintf("the trace's model needs about %s for its %s events (estimated after reading %s of the file), more than half the budget of %s (the other half is for reading and the analysis)",
			FormatBytes(e.Need), approxCount(float64(e.Events)/e.Read), percent(e.Read), FormatBytes(e.Budget))
	}
	return fmt.Sprintf("the trace needs about %s of memory for its %s events (estimated after reading %s of the file), more than the budget of %s",
		FormatBytes(e.Need), approxCount(float64(e.Events)/e.Read), percent(e.Read), FormatBytes(e.Budget))
}

// percent writes a fraction as a percentage, with a decimal below 1%
// (a gzip bomb is refused after a fraction of a percent, not "0%").
func percent(f float64) string {
	if f < 0.01 {
		return fmt.Sprintf("%.1f%%", f*100)
	}
	return fmt.Sprintf("%.0f%%", f*100)
}

// modelShare: the model may take 1/modelShare of the memory budget. The
// budget caps the whole process (--max-memory), and the rest of it holds
// the read buffers, garbage the collector has not yet reclaimed and the
// analysis after reading (two to three times the model on 10 M kernels),
// so a model past half of it stops reading with the size the trace
// needs rather than the process being stopped later for passing it.
const modelShare = 2

// approxCount writes a large count the way a person would say it.
func approxCount(n float64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("~%.1f G", n/1e9)
	case n >= 1e6:
		return fmt.Sprintf("~%.1f M", n/1e6)
	case n >= 1e3:
		return fmt.Sprintf("~%.0f k", n/1e3)
	}
	return fmt.Sprintf("~%.0f", n)
}

// DefaultMaxMemory is the memory budget when Options.MaxMemory is 0 (and
// the process's, without --max-memory): half of the memory the process
// may use (physical RAM, or the cgroup limit of a container when lower),
// so that one trace cannot take the machine. The model may take half of
// it (modelShare).
func DefaultMaxMemory() int64 {
	avail := physicalMemory()
	if lim := cgroupLimit(); lim > 0 && (avail <= 0 || lim < avail) {
		avail = lim
	}
	if avail <= 0 {
		return 4 << 30 // unknown: a budget most machines can honour
	}
	return avail / 2
}

// cgroupLimit reads a cgroup v2 memory limit ("max" or absent: 0).
func cgroupLimit() int64 {
	b, err := os.ReadFile("/sys/fs/cgroup/memory.max")
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// ParseByteSize reads a size such as "512MB", "4GiB", "1.5G" or "1048576"
// (bytes). K, M, G and T are powers of 1024 with or without "iB"/"B": what
// people mean by memory sizes.
func ParseByteSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	mult := 1.0
	if t != "" {
		if i := strings.IndexByte("KMGT", t[len(t)-1]); i >= 0 {
			mult = math.Pow(1024, float64(i+1))
			t = t[:len(t)-1]
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) || v*mult >= math.MaxInt64 {
		return 0, errors.New("want a size such as 512MB or 8GB")
	}
	return int64(v * mult), nil
}

// FormatBytes writes n bytes as "4.1 GB" (powers of 1024), as
// membudget's messages do.
func FormatBytes(n int64) string { return membudget.FormatBytes(n) }

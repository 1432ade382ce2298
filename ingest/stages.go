package ingest

import (
	"fmt"
	"io"
	"runtime/metrics"
	"sort"
	"sync"
	"time"
)

// stageClock times a read's stages for Options.Stages, to find the
// critical path on many cores: when the scanner finished, when the last
// batch was merged, how long each pass after the last event took, and how
// much time the serial stages spent working and waiting. A nil clock (the
// default) does nothing and costs a nil check.
type stageClock struct {
	start  time.Time
	w      io.Writer
	mu     sync.Mutex // marks come from several goroutines
	sums   map[string]time.Duration
	counts map[string]int
}

func newStageClock(w io.Writer) *stageClock {
	if w == nil {
		return nil
	}
	return &stageClock{start: time.Now(), w: w, sums: map[string]time.Duration{}, counts: map[string]int{}}
}

// mark reports that stage ended now.
func (c *stageClock) mark(stage string) {
	if c == nil {
		return
	}
	at := time.Since(c.start)
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.w, "ingest %-32s at %8.1f ms\n", stage, ms(at))
}

// now is time.Now on a live clock, the zero time on a nil one, so callers
// time a span without a branch of their own.
func (c *stageClock) now() time.Time {
	if c == nil {
		return time.Time{}
	}
	return time.Now()
}

// add accumulates the time since from under name (reported by flush).
func (c *stageClock) add(name string, from time.Time) {
	if c == nil {
		return
	}
	d := time.Since(from)
	c.mu.Lock()
	c.sums[name] += d
	c.counts[name]++
	c.mu.Unlock()
}

// count counts one occurrence of name (reported by flush).
func (c *stageClock) count(name string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.counts[name]++
	c.mu.Unlock()
}

// flush reports the accumulated sums and counts, and the runtime's
// figures so far: collections and the CPU time of each class.
func (c *stageClock) flush() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(c.counts))
	for name := range c.counts {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if d, ok := c.sums[name]; ok {
			fmt.Fprintf(c.w, "ingest %-32s sum %8.1f ms over %d\n", name, ms(d), c.counts[name])
		} else {
			fmt.Fprintf(c.w, "ingest %-32s %d\n", name, c.counts[name])
		}
	}
	s := []metrics.Sample{
		{Name: "/gc/cycles/total:gc-cycles"},
		{Name: "/cpu/classes/gc/total:cpu-seconds"},
		{Name: "/cpu/classes/user:cpu-seconds"},
		{Name: "/cpu/classes/idle:cpu-seconds"},
		{Name: "/cpu/classes/scavenge/total:cpu-seconds"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/total:bytes"},
	}
	metrics.Read(s)
	for _, m := range s {
		switch m.Value.Kind() {
		case metrics.KindUint64:
			fmt.Fprintf(c.w, "runtime %-40s %d\n", m.Name, m.Value.Uint64())
		case metrics.KindFloat64:
			fmt.Fprintf(c.w, "runtime %-40s %.3f\n", m.Name, m.Value.Float64())
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

package analyze

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// stageClock writes how long each part of an analysis took to w
// (Config.Stages; the CLI's $TRACELENS_STAGES), so a slow analysis of a
// real trace can be pinned on a part without a profiler. A nil clock or
// writer records nothing. Finding analyzers run side by side: lines are
// written whole, under a lock.
type stageClock struct {
	w io.Writer
	// began is when the analysis began: each line gives its stage's start
	// from it too, so the stages that run side by side show which of them
	// the analysis waited for.
	began time.Time
	mu    sync.Mutex
}

// start begins timing stage name; the returned func ends it, writing one
// line.
func (c *stageClock) start(name string) func() {
	if c == nil || c.w == nil {
		return func() {}
	}
	t0 := time.Now()
	return func() {
		d := time.Since(t0)
		c.mu.Lock()
		defer c.mu.Unlock()
		fmt.Fprintf(c.w, "analyze %-32s %8.1f ms  from %7.1f ms\n", name, float64(d.Microseconds())/1000, float64(t0.Sub(c.began).Microseconds())/1000)
	}
}

package main

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/ingest"
)

// loadAnalyzedPair reads and analyzes diff's BASE and NEW traces with the
// command's options (e.cfg: --enable/--disable reach both sides): side by
// side under one collector scope where both are files and the memory
// budget allows (pairSideBySide), else one after the other, each read as
// every command reads.
func loadAnalyzedPair(e *env, paths []string) ([2]*analyze.Result, error) {
	if pairSideBySide(e, paths) {
		return loadPairSideBySide(e, paths)
	}
	return loadPairInOrder(e, paths)
}

// loadPairInOrder reads and analyzes BASE, then NEW, as report would each.
func loadPairInOrder(e *env, paths []string) ([2]*analyze.Result, error) {
	var out [2]*analyze.Result
	for i, p := range paths {
		t, err := loadTrace(e, p)
		if err != nil {
			return out, err
		}
		if out[i], err = e.analyzeWithin(p, t, e.cfg); err != nil {
			return out, fmt.Errorf("analyzing %s: %w", p, err)
		}
	}
	return out, nil
}

// pairSideBySide reports whether diff reads and analyzes paths side by
// side under one collector scope (loadPairSideBySide): both regular files
// (standard input and embedded traces are read as every command reads
// them), and both reads' collector limit within half the memory budget,
// so that a tight --max-memory keeps each read's own scope, whose garbage
// of the first is gone before the second begins.
func pairSideBySide(e *env, paths []string) bool {
	if len(paths) != 2 {
		return false
	}
	for _, p := range paths {
		if p == "-" || strings.HasPrefix(p, embeddedPrefix) {
			return false
		}
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			return false
		}
	}
	b := e.memBudget()
	return b == nil || pairCollectorLimit(paths) <= b.Limit()/2
}

// pairCollectorLimit is the soft memory limit both reads and analyses
// share (pairLimit of both traces' size).
func pairCollectorLimit(paths []string) int64 { return pairLimit(pairSize(paths)) }

// pairLimit is the soft memory limit for reading and analyzing two traces
// of size bytes together: what readTrace gives one big read, for the two,
// plus a tenth of their size for the two analyses' garbage. Without it the
// analyses (~90 MB each on a 500 MB trace) crossed the limit and the
// collector marked both models again, ~300 MB of them: on a 2-core host
// diff used 0.3-0.4 CPU-s more (of ~3) for 90 MB less peak RSS.
func pairLimit(size int64) int64 { return collectorLimit(size) + size/10 }

// pairSize is the size of both traces' JSON (ingest.JSONSize).
func pairSize(paths []string) int64 {
	var size int64
	for _, p := range paths {
		size += ingest.JSONSize(p)
	}
	return size
}

// loadPairSideBySide reads and analyzes BASE and NEW at once, each on its
// own goroutine, under one collector scope for both reads and analyses:
// neither read sets its own, nor does an analysis tighten the limit (and
// collect the whole heap) before it runs. On 16 cores the second read and
// analysis had doubled diff's time over report's; on 2, each read's own
// scope had the collector mark BASE's model and analysis again and again
// through NEW's read (a sixth of diff's CPU), and side by side under one
// scope measured faster than one after the other under it (1.50 against
// 1.60 s on a 400 MB pair, the same peak RSS). The budget names both
// files. The first error in BASE, NEW order wins.
func loadPairSideBySide(e *env, paths []string) ([2]*analyze.Result, error) {
	var out [2]*analyze.Result
	both := strings.Join(paths, " and ")
	b := e.memBudget()
	if b != nil {
		b.Enter(both, "reading and analysis")
	}
	restore := func() {}
	if size := pairSize(paths); size > bigTrace {
		// As readTrace for one big read: small traces keep the
		// collector's own pacing (a limit of a few MB would collect
		// without pause).
		limit := pairLimit(size)
		if b != nil {
			limit = min(limit, b.Limit()*9/10)
		}
		restore = ingest.CollectorLimit(limit)
	}
	progress := newPairProgress(e, both)
	var errs [2]error
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Go(func() { out[i], errs[i] = loadSide(e, p, progress.side(i)) })
	}
	wg.Wait()
	progress.done()
	restore()
	if b != nil {
		b.Enter(both, "writing the output")
	}
	for _, err := range errs {
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// loadSide reads and analyzes one side of a side-by-side pair: readTrace
// and analyzeWithin without their collector settings, which the pair
// holds for both.
func loadSide(e *env, path string, progress func(read, total int64)) (*analyze.Result, error) {
	opt := ingest.Options{MaxMemory: e.maxMemory, Stages: e.stages, Progress: progress}
	t, err := readWith(e, path, opt)
	if err == nil && e.stepRange != "" {
		err = ingest.StepsFromRange(t, e.stepRange)
	}
	if err != nil {
		return nil, err
	}
	cfg := e.cfg
	cfg.Stages = e.stages
	if b := e.memBudget(); b != nil {
		cfg.Budget = analysisCheck(b, false)
	}
	r, err := analyzeTrace(t, cfg)
	e.stageAt("analysis returned")
	if err != nil {
		return nil, fmt.Errorf("analyzing %s: %w", path, err)
	}
	return r, nil
}

// pairProgress is one progress bar for two reads (on a terminal): the
// bytes of both over both sizes.
type pairProgress struct {
	mu          sync.Mutex
	bar         *progressBar
	read, total [2]int64
}

// newPairProgress returns the pair's progress: a bar on a terminal, else
// nothing (the memory budget names no byte offset for two files read at
// once, only both files and the stage).
func newPairProgress(e *env, label string) *pairProgress {
	p := &pairProgress{}
	if e.stderrTTY {
		p.bar = &progressBar{e: e, start: time.Now(), path: label}
	}
	return p
}

// side is the Progress callback of read i (nil without a bar).
func (p *pairProgress) side(i int) func(read, total int64) {
	if p.bar == nil {
		return nil
	}
	return func(read, total int64) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.read[i], p.total[i] = read, total
		p.bar.update(p.read[0]+p.read[1], p.total[0]+p.total[1])
	}
}

// done clears the bar.
func (p *pairProgress) done() {
	if p.bar != nil {
		p.bar.done()
	}
}

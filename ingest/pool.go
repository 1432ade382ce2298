package ingest

import (
	"fmt"
	"sync"
)

// workerPool is the parsing side of a read: its workers parse the batches
// the scanner sends and hand their results to the merger, returning
// spent buffers (free) and results (spare) for reuse.
type workerPool struct {
	n       int
	batches chan *batch
	results chan *chunkResult
	free    chan []byte
	spare   chan *chunkResult
	// stop tells the scanner that no more events are wanted.
	stop chan struct{}
	wg   sync.WaitGroup
}

// startWorkers starts n workers (slow: each reads every event with
// gjson), which run until the batches channel closes.
func startWorkers(n int, slow bool, clock *stageClock) *workerPool {
	p := &workerPool{
		n:       n,
		batches: make(chan *batch, n),
		results: make(chan *chunkResult, n),
		free:    make(chan []byte, n+2),
		spare:   make(chan *chunkResult, n+2),
		stop:    make(chan struct{}),
	}
	for i := 0; i < n; i++ {
		w := newWorker(i, p.spare)
		w.slow = slow
		w.clock = clock
		p.wg.Add(1)
		go p.work(w, clock)
	}
	return p
}

// work is one worker's loop: parse each batch, give a direct batch's
// buffer back to the scanner, send the result to the merger.
func (p *workerPool) work(w *worker, clock *stageClock) {
	defer p.wg.Done()
	idle := clock.now()
	for b := range p.batches {
		clock.add("workers idle", idle)
		t := clock.now()
		res := w.safeParse(b)
		clock.add("parse (all workers)", t)
		if b.src == nil { // a direct batch's buffer is the worker's
			select {
			case p.free <- b.buf:
			default:
			}
		}
		t = clock.now()
		p.results <- res
		clock.add("workers wait for the merger", t)
		idle = clock.now()
	}
}

// emit hands a batch to the workers; false once the read has stopped.
func (p *workerPool) emit(b *batch) bool {
	select {
	case p.batches <- b:
		return true
	case <-p.stop:
		return false
	}
}

// scan runs the scanner in a goroutine of its own and, when it ends,
// closes the batches and, once the workers are done, the results. The
// error it returns is set before the results close.
func (p *workerPool) scan(st *streamer, clock *stageClock) *error {
	scanErr := new(error)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				*scanErr = fmt.Errorf("internal error while reading: %v", r)
			}
			close(p.batches)
			p.wg.Wait()
			close(p.results)
		}()
		*scanErr = st.run()
		clock.mark("scan done")
	}()
	return scanErr
}

// mergeInOrder adds the workers' results to m in batch order as they
// come, until the results close. At the first error, a worker's or the
// model outgrowing its share of budget, it stops the scanner and merges
// no more, and returns that error.
func (p *workerPool) mergeInOrder(m *merger, gc *gcScope, budget int64, pr *progressReader, clock *stageClock) error {
	pending := map[int]*chunkResult{}
	next := 0
	var parseErr error
	fail := func(err error) {
		if parseErr == nil {
			parseErr = err
			close(p.stop)
		}
	}
	wait := clock.now()
	for res := range p.results {
		clock.add("merge idle", wait)
		if res.err != nil {
			fail(res.err)
		}
		pending[res.seq] = res
		for {
			r, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			if parseErr == nil {
				t := clock.now()
				m.add(r)
				clock.add("merge add", t)
				select {
				case p.spare <- r:
				default:
					clock.count("merge: results dropped")
				}
				if m.bytes > budget/modelShare || m.sizer.over {
					fail(m.budgetError(budget, pr.fraction(r.end)))
				}
				gc.grow(m.bytes)
			}
			next++
		}
		wait = clock.now()
	}
	return parseErr
}

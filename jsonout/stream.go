package jsonout

import (
	"io"
	"runtime"
	"sync"
	"sync/atomic"
)

// streamWeight is the heaviest piece stream encodes: about 150 kB of
// text, so that the few it holds at a time are small next to what the
// collector lets the heap grow by. Encoded whole, a 2,755-step report's
// 17 MB, allocated right after the analysis (which ends near the
// collector's goal), started a collection that marked the whole trace
// model, 60-70 ms of CPU, most of it assists charged to the encoding
// goroutines: three times the encoding's own.
const streamWeight = 1 << 12

// eachPiece calls f on every piece, on up to GOMAXPROCS threads.
func eachPiece(pieces []*piece, f func(*piece)) {
	workers := min(runtime.GOMAXPROCS(0), len(pieces))
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1)) - 1
			if i >= len(pieces) {
				return
			}
			f(pieces[i])
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// encodePieces encodes the pieces side by side, each into a buffer of
// its own, and returns the first error.
func encodePieces(pieces []*piece) error {
	eachPiece(pieces, func(p *piece) { p.encode(nil) })
	for _, p := range pieces {
		if p.err != nil {
			return p.err
		}
	}
	return nil
}

// checkPieces reports, side by side, whether every piece encodes.
func checkPieces(pieces []*piece) error {
	eachPiece(pieces, func(p *piece) { p.err = p.check() })
	for _, p := range pieces {
		if p.err != nil {
			return p.err
		}
	}
	return nil
}

// stream writes the pieces and the tail to w, in order, the pieces
// encoded side by side on up to GOMAXPROCS threads: each piece's buffer,
// once written, is reused for a later one, so that only a few pieces'
// text is held at a time. The pieces must encode (checkPieces): the
// output is written as it is encoded.
func stream(w io.Writer, pieces []*piece, tail []byte) error {
	workers := min(runtime.GOMAXPROCS(0), len(pieces))
	// A buffer is taken before a piece: every piece taken has one, so
	// the piece the writer waits for is always being encoded.
	free := make(chan []byte, workers+2)
	for range cap(free) {
		free <- nil
	}
	done := make([]chan struct{}, len(pieces))
	for i := range done {
		done[i] = make(chan struct{}, 1)
	}
	var next atomic.Int64
	work := func() {
		for {
			buf := <-free
			i := int(next.Add(1)) - 1
			if i >= len(pieces) {
				return
			}
			pieces[i].encode(buf[:0])
			done[i] <- struct{}{}
		}
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(work)
	}
	var err error
	for i, p := range pieces {
		<-done[i]
		if err == nil {
			err = p.err
		}
		if err == nil {
			_, err = w.Write(p.out)
		}
		// After an error the rest is encoded but not written: the
		// workers wait for buffers until the pieces run out.
		free <- p.out
		p.out = nil
	}
	wg.Wait()
	if err != nil {
		return err
	}
	_, err = w.Write(tail)
	return err
}
